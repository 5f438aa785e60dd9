using System.Diagnostics;
using System.Globalization;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using IpcBench.V1;
using Spectre.Console;
using Spectre.Console.Rendering;

namespace IpcBench.Daemon.Run;

/// <summary>Where `run` reports the scenario it is on, every poll while it runs.</summary>
public interface IMatrixProgress
{
    /// <param name="number">1-based position of <paramref name="scenario"/> in the matrix.</param>
    /// <param name="total">The suite's scenarios_total now: it grows by a noise retry, and an adaptive suite's falls as cells reach their target.</param>
    void Update(int number, int total, Scenario scenario);
}

/// <summary>`run`'s progress: a live display on a terminal (<see cref="ProgressDisplay"/>), plain lines otherwise.</summary>
public static class MatrixProgress
{
    /// <summary>Runs <paramref name="work"/> with the progress display for a matrix of <paramref name="total"/> scenarios.</summary>
    /// <param name="live">The console for the live display; null for plain lines.</param>
    /// <param name="perScenario">Warmup plus measured time of one scenario: what the ETA is counted in.</param>
    public static async Task<T> RunAsync<T>(IAnsiConsole? live, int total, TimeSpan perScenario, Func<IMatrixProgress, Task<T>> work)
    {
        if (live is null)
        {
            return await work(Plain(Console.Error)).ConfigureAwait(false);
        }

        var display = new LiveProgress(total, perScenario);
        return await live.Live(display.Render()).AutoClear(false)
            .StartAsync(context =>
            {
                display.Context = context;
                return work(display);
            })
            .ConfigureAwait(false);
    }

    /// <summary>"[2/8] uds 1 KB full 1:1 all-to-all RUNNING 1.23 M msg/s": the current scenario and its live rate.</summary>
    public static string Describe(int number, int total, Scenario scenario)
    {
        var spec = scenario.Spec;
        var topology = spec.Topology == Topology.Paired ? "paired" : "all-to-all";
        return $"[{number}/{total}] {spec.Transport} {ResultTables.Bytes(spec.PayloadBytes)} {ResultTables.AccessName(spec.PayloadAccess)} " +
               $"{spec.Publishers}:{spec.Subscribers} {topology} {scenario.State.ToString().ToUpperInvariant()} " +
               $"{ResultTables.Count(scenario.LastInterval?.MessagesPerSecond ?? 0)} msg/s";
    }

    /// <summary>Progress for a file, a pipe or CI: one line to <paramref name="error"/> per finished scenario, nothing while one runs.</summary>
    public static IMatrixProgress Plain(TextWriter error) => new PlainProgress(error);

    /// <summary>
    /// "[3/28] shm-ring 8 B 1:1 full yield: 12.30 M msg/s, COMPLETED": a finished scenario, its msg/s over the measured
    /// window and its final state, then what made it invalid or failed, if anything.
    /// </summary>
    public static string DescribeFinished(int number, int total, Scenario scenario)
    {
        var validity = scenario.Stats is { Validity.Count: > 0 } stats
            ? ", invalid: " + string.Join(", ", ScenarioProtos.FromProto(stats).Validity.Select(v => v.KindName.Replace('_', ' ')))
            : string.Empty;
        var error = string.IsNullOrEmpty(scenario.Error) ? string.Empty : ": " + scenario.Error;
        return $"[{number}/{total}] {ResultTables.Label(scenario.Spec)}: {ResultTables.Count(scenario.Stats?.MessagesPerSecond ?? 0)} msg/s, " +
               $"{scenario.State.ToString().ToUpperInvariant()}{error}{validity}";
    }

    /// <summary>
    /// One whole line per scenario as it finishes: no \r and no per-poll updates, so a file or a log reads one line a
    /// scenario. A scenario is written once, however many polls see it finished.
    /// </summary>
    private sealed class PlainProgress(TextWriter error) : IMatrixProgress
    {
        private int _written;

        public void Update(int number, int total, Scenario scenario)
        {
            if (number <= _written || !ScenarioProtos.FromProto(scenario.State).IsFinished())
            {
                return;
            }

            _written = number;
            error.WriteLine(DescribeFinished(number, total, scenario));
        }
    }

    /// <summary>
    /// Two lines redrawn in place: the current scenario with its live rate, then the matrix's share done and its ETA.
    /// Both fit 80 columns, so nothing wraps on a default terminal. Progress is counted in scenario seconds (warmup plus
    /// measured time): finished scenarios whole, the current one from when it began warming up.
    /// </summary>
    private sealed class LiveProgress(int total, TimeSpan perScenario) : IMatrixProgress
    {
        private int _total = total;
        private const int BarWidth = 24;
        private readonly Stopwatch _matrix = Stopwatch.StartNew();
        private readonly Stopwatch _current = new();
        private string _scenario = "starting";
        private int _number;
        private double _done;

        public LiveDisplayContext? Context { get; set; }

        public void Update(int number, int total, Scenario scenario)
        {
            _total = total;
            if (number != _number)
            {
                _number = number;
                _current.Reset();
            }

            if (!_current.IsRunning && scenario.State is not (ScenarioState.Pending or ScenarioState.Starting))
            {
                _current.Start();
            }

            double seconds = perScenario.TotalSeconds;
            double current = ScenarioProtos.FromProto(scenario.State).IsFinished() ? seconds : Math.Min(_current.Elapsed.TotalSeconds, seconds);
            _done = (number - 1) * seconds + current;
            _scenario = Describe(number, _total, scenario);
            Context?.UpdateTarget(Render());
        }

        public IRenderable Render()
        {
            double all = Math.Max(_total * perScenario.TotalSeconds, 1e-9);
            double share = Math.Clamp(_done / all, 0, 1);
            int filled = (int)Math.Round(share * BarWidth);
            var line = string.Create(CultureInfo.InvariantCulture, $"{share * 100,3:0}% of {_total} scenarios, ETA {Eta(all)}");
            return new Rows(
                new Text(_scenario),
                new Markup($"[green]{new string('━', filled)}[/][grey]{new string('━', BarWidth - filled)}[/] {Markup.Escape(line)}"));
        }

        /// <summary>
        /// Until a scenario has finished, the matrix's remaining nominal time; after, that time at the pace so far, which
        /// then includes agent start-up and flushing.
        /// </summary>
        private string Eta(double all)
        {
            double remaining = all - _done;
            if (_done >= perScenario.TotalSeconds && _done > 0)
            {
                remaining *= _matrix.Elapsed.TotalSeconds / _done;
            }

            var eta = TimeSpan.FromSeconds(Math.Max(remaining, 0));
            return string.Create(CultureInfo.InvariantCulture, $"{(int)eta.TotalHours}:{eta:mm\\:ss}");
        }
    }
}
