using System.Diagnostics;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Grpc.Net.Client;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A daemon as its control plane's clients see it: calls with a deadline, scenario runs waited for, and what it logged
/// for failure messages. The same for a real process (<see cref="DaemonProcess"/>) and an in-process host on ASP.NET
/// Core's TestServer (<see cref="InProcessDaemon"/>), so a test says which it needs and nothing else changes.
/// </summary>
internal abstract class DaemonClient(GrpcChannel channel, OutputLog output)
{
    private static readonly TimeSpan CallDeadline = TimeSpan.FromSeconds(40);

    public GrpcChannel Channel { get; } = channel;

    /// <summary>The generated BenchControl client on <see cref="Channel"/>.</summary>
    public BenchControl.BenchControlClient Control { get; } = new(channel);

    /// <summary>What the daemon logged (a process: everything it printed).</summary>
    public OutputLog Output { get; } = output;

    public async Task<IReadOnlyList<TransportInfo>> ListTransportsAsync() =>
        [.. (await Control.ListTransportsAsync(new(), deadline: Deadline())).Transports];

    /// <summary>Starts a scenario and returns the snapshot StartScenario answered with.</summary>
    public async Task<Scenario> StartScenarioAsync(ScenarioSpec spec)
    {
        var response = await Control.StartScenarioAsync(new() { Spec = spec }, deadline: Deadline());
        Assert.False(string.IsNullOrEmpty(response.Id), "StartScenario returned no id");
        Assert.Equal(response.Id, response.Scenario?.Id);
        return response.Scenario!;
    }

    public async Task<Scenario> GetScenarioAsync(string id) => await Control.GetScenarioAsync(new() { Id = id }, deadline: Deadline());

    public async Task<Scenario> StopScenarioAsync(string id) => await Control.StopScenarioAsync(new() { Id = id }, deadline: Deadline());

    public async Task<IReadOnlyList<Scenario>> ListScenariosAsync() =>
        [.. (await Control.ListScenariosAsync(new(), deadline: Deadline())).Scenarios];

    public async Task<ListScenariosResponse> ListScenariosAsync(ListScenariosRequest request) =>
        await Control.ListScenariosAsync(request, deadline: Deadline());

    public async Task<ExportScenariosResponse> ExportScenariosAsync(ExportScenariosRequest request) =>
        await Control.ExportScenariosAsync(request, deadline: Deadline());

    public async Task<CompareScenariosResponse> CompareScenariosAsync(CompareScenariosRequest request) =>
        await Control.CompareScenariosAsync(request, deadline: Deadline());

    public async IAsyncEnumerable<Scenario> WatchScenarioAsync(string id, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        using var call = Control.WatchScenario(new WatchScenarioRequest { Id = id }, cancellationToken: cancellationToken);
        while (await call.ResponseStream.MoveNext(cancellationToken))
        {
            yield return call.ResponseStream.Current;
        }
    }

    /// <summary>Starts a scenario and waits for its result.</summary>
    public async Task<Scenario> RunScenarioAsync(ScenarioSpec spec, TimeSpan? timeout = null)
    {
        var started = await StartScenarioAsync(spec);
        return await WaitUntilFinishedAsync(started.Id, timeout ?? DefaultTimeout(spec));
    }

    public Task<Scenario> WaitUntilFinishedAsync(string id, TimeSpan timeout) =>
        WaitForAsync(id, ScenarioStates.IsFinished, timeout, "to finish");

    public Task<Scenario> WaitForStateAsync(string id, ScenarioState state, TimeSpan timeout) =>
        WaitForAsync(id, s => s.State == state, timeout, $"to reach {state}");

    /// <summary>Polls GetScenario until <paramref name="condition"/> holds; a scenario that finishes otherwise fails the wait at once.</summary>
    public async Task<Scenario> WaitForAsync(string id, Func<Scenario, bool> condition, TimeSpan timeout, string what)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var scenario = await GetScenarioAsync(id);
            if (condition(scenario))
            {
                return scenario;
            }

            if (ScenarioStates.IsFinished(scenario) || clock.Elapsed > timeout)
            {
                throw new Xunit.Sdk.XunitException(
                    $"Scenario {id} did not get {what} within {timeout.TotalSeconds:0.#} s; it is {scenario.State}.\n{Describe(scenario)}");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>Until disposed, everything the daemon logs from now on also goes to the test's output (shown when it fails).</summary>
    public IDisposable LogTo(ITestOutputHelper output) => new OutputForwarder(Output, output);

    /// <summary>A scenario as JSON, followed by the daemon's output: what a failing assertion should show.</summary>
    public string Describe(Scenario? scenario) =>
        (scenario is null ? string.Empty : "Scenario: " + JsonFormatter.Default.Format(scenario) + "\n") + Output.Describe();

    private static TimeSpan DefaultTimeout(ScenarioSpec spec) =>
        TimeSpan.FromSeconds(30) + (spec.Duration?.ToTimeSpan() ?? TimeSpan.Zero) + (spec.Warmup?.ToTimeSpan() ?? TimeSpan.Zero);

    protected static DateTime Deadline() => DateTime.UtcNow + CallDeadline;
}
