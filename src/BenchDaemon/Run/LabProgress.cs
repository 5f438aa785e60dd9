using System.Globalization;
using IpcBench.Daemon.Lab;
using IpcBench.V1;
using Spectre.Console;
using Spectre.Console.Rendering;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run --daemons`' progress: one line per daemon. On a terminal they are redrawn in place (the same live display
/// `run` uses, <see cref="ProgressDisplay"/>); otherwise a line is written whenever a daemon moves on to another
/// scenario or state, so a CI log reads as a story rather than a rate per second.
/// </summary>
internal static class LabProgress
{
    public static async Task RunAsync(IAnsiConsole? live, IReadOnlyList<LabMachineRun> machines, Func<ILabProgress, Task> work)
    {
        int width = machines.Max(m => m.Daemon.Name.Length);
        if (live is null)
        {
            await work(new PlainLines(width)).ConfigureAwait(false);
            return;
        }

        var display = new LiveLines(machines, width);
        await live.Live(display.Render()).AutoClear(false).StartAsync(context =>
        {
            display.Context = context;
            return work(display);
        }).ConfigureAwait(false);
    }

    /// <summary>"lab-01  [3/6] uds 8 B full 1:1 RUNNING 2.0 K msg/s, ETA 0:00:04", "lab-02  COMPLETED, 6 of 6 scenarios done", "lab-03  FAILED: ...".</summary>
    public static string Describe(LabMachineRun machine, int width, bool withRate = true)
    {
        var name = machine.Daemon.Name.PadRight(width);
        if (machine.Error is { } error)
        {
            return $"{name}  FAILED: {error}";
        }

        if (machine.Progress is not { } p)
        {
            return $"{name}  starting";
        }

        string state = p.State.ToString().ToUpperInvariant();
        if (p.State is SuiteState.Completed or SuiteState.Stopped or SuiteState.Failed || p.RunningSpec is null)
        {
            return $"{name}  {state}, {p.ScenariosDone} of {p.ScenariosTotal} scenarios done";
        }

        var spec = p.RunningSpec;
        // Short enough for 80 columns with a short name: all-to-all, the default, goes unsaid.
        string topology = spec.Topology == Topology.Paired ? " paired" : string.Empty;
        string rate = withRate && p.RunningState == ScenarioState.Running ? $" {ResultTables.Count(p.RunningMessagesPerSecond)} msg/s" : string.Empty;
        string eta = withRate && p.Eta is { } left ? string.Create(CultureInfo.InvariantCulture, $", ETA {left.ToTimeSpan():h\\:mm\\:ss}") : string.Empty;
        return $"{name}  [{p.ScenariosDone + 1}/{p.ScenariosTotal}] {spec.Transport} {ResultTables.Bytes(spec.PayloadBytes)} {ResultTables.AccessName(spec.PayloadAccess)} " +
               $"{spec.Publishers}:{spec.Subscribers}{topology} {p.RunningState.ToString().ToUpperInvariant()}{rate}{eta}";
    }

    private sealed class PlainLines(int width) : ILabProgress
    {
        private readonly Lock _gate = new();
        private readonly Dictionary<LabMachineRun, string> _last = [];

        public void Update(LabMachineRun machine)
        {
            // The live rate changes every second: a line per state, not per tick.
            var line = Describe(machine, width, withRate: false);
            lock (_gate)
            {
                if (_last.GetValueOrDefault(machine) != line)
                {
                    _last[machine] = line;
                    Console.Error.WriteLine(line);
                }
            }
        }
    }

    private sealed class LiveLines(IReadOnlyList<LabMachineRun> machines, int width) : ILabProgress
    {
        private readonly Lock _gate = new();

        public LiveDisplayContext? Context { get; set; }

        public void Update(LabMachineRun machine)
        {
            lock (_gate)
            {
                Context?.UpdateTarget(Render());
            }
        }

        /// <summary>One terminal line per daemon, cut with an ellipsis rather than wrapped, so the display keeps its height.</summary>
        public IRenderable Render() => new Rows(machines.Select(m => new Text(Describe(m, width)) { Overflow = Overflow.Ellipsis }));
    }
}
