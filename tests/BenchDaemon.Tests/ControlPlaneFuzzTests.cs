using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using Google.Protobuf;
using Google.Protobuf.Reflection;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Throws garbage at every BenchControl method of a daemon: undecodable and mis-framed request bytes, random and
/// corrupted specs, and random RPC sequences from a few concurrent clients (starts stopped at once, watches cut short,
/// real and made-up ids). The daemon must survive, and answer only OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION
/// or RESOURCE_EXHAUSTED: anything else (INTERNAL above all) is a bug in the daemon or its gRPC stack.
/// <para>
/// The whole run is a control-plane contract, so it runs on the in-process host, whose crash would take the test run
/// with it; a shorter run on a real process keeps what only a process shows: Kestrel in front, the process alive
/// afterwards, and scenarios with agent processes started and stopped at random.
/// </para>
/// <para>
/// Seeded: the seed is printed and named in every failure; IPCBENCH_FUZZ_SEED=n replays a run (the concurrent phase
/// interleaves differently, but draws the same requests). Methods come from the service descriptor, so RPCs added to
/// control.proto are fuzzed without changes here; give one a tailored generator in <see cref="Generators"/> when random
/// field values cannot reach its interesting cases (real scenario ids, say).
/// </para>
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed partial class ControlPlaneFuzzTests(ITestOutputHelper output)
{
    private const string Service = "ipcbench.v1.BenchControl";
    private const int MaxPublishers = 4;
    private const int MaxSubscribers = 4;
    private const int MaxPayloadBytes = 64 * 1024;
    private const int MaxConcurrentScenarios = 2;

    /// <summary>The longest a valid scenario the fuzzer starts may measure: the machine has 2 cores, shared.</summary>
    private static readonly TimeSpan LongestValidDuration = TimeSpan.FromMilliseconds(300);

    /// <summary>
    /// Random sequences on the in-process host, from twice the clients the process run had for 12 s: the clients mostly
    /// wait (watches, drains), so together with the process run below this makes more calls than those 12 s did.
    /// </summary>
    private static readonly TimeSpan SequencePhase = TimeSpan.FromSeconds(6);

    private const int SequenceClients = 6;

    /// <summary>Random sequences on the real process: long enough for several scenarios with agents to start and stop.</summary>
    private static readonly TimeSpan ProcessSequencePhase = TimeSpan.FromSeconds(2.5);

    private const int ProcessSequenceClients = 3;

    private const int GarbageSpecsPerWorker = 400;

    /// <summary>No call may take longer than this: a hang is a failure too (only StopScenario waits, for a drain).</summary>
    private static readonly TimeSpan CallTimeout = TimeSpan.FromSeconds(30);

    private static readonly HashSet<StatusCode> Allowed =
        [StatusCode.OK, StatusCode.InvalidArgument, StatusCode.NotFound, StatusCode.FailedPrecondition, StatusCode.ResourceExhausted];

    /// <summary>
    /// Declared in control.proto ahead of the suite engine, so the generated base answers UNIMPLEMENTED for
    /// them and only them; the engine's step empties this set.
    /// </summary>
    private static readonly HashSet<string> DeclaredNotServedYet = [];

    /// <summary>Transports cheap enough to run often: in-process channels, and UDS for the agent-process path.</summary>
    private static readonly string[] CheapTransports = ["channels", "uds"];

    private static readonly ServiceDescriptor Control = ControlReflection.Descriptor.Services.Single(s => s.FullName == Service);

    /// <summary>Request generators by method; methods without one get a message with random field values.</summary>
    private static readonly Dictionary<string, Func<Fuzzer, IMessage>> Generators = new()
    {
        ["StartScenario"] = f => new StartScenarioRequest { Spec = f.Chance(0.4) ? f.TinyValidSpec() : f.GarbageSpec() },
        ["GetScenario"] = f => new GetScenarioRequest { Id = f.SomeId() },
        ["StopScenario"] = f => new StopScenarioRequest { Id = f.SomeId() },
        ["WatchScenario"] = f => new WatchScenarioRequest { Id = f.SomeId() },
    };

    /// <summary>The whole run on the in-process host: every phase, with in-process scenarios (channels).</summary>
    [Fact]
    public async Task GarbageAndRandomCalls_NeverCrashTheDaemon_AndGetOnlyExpectedStatuses()
    {
        var seed = Seed();
        await using var daemon = await InProcessDaemon.StartAsync(Limits);
        using var log = daemon.LogTo(output);
        using var client = new RawGrpcClient(new HttpClient(daemon.CreateHandler()) { BaseAddress = new Uri("http://localhost"), Timeout = Timeout.InfiniteTimeSpan });
        await FuzzAsync(daemon, client, seed, ["channels"], garbageSpecs: true, SequencePhase, SequenceClients);
    }

    /// <summary>
    /// A real daemon through Kestrel, its process surviving, and the agent-process path (uds) in the random sequences:
    /// the garbage bytes and a short random-sequence phase. The many garbage specs need no process: the run above has them.
    /// </summary>
    [Fact]
    public async Task GarbageBytesAndRandomSequences_WithAgents_NeverCrashARealDaemonProcess()
    {
        var seed = Seed();
        await using var daemon = await DaemonProcess.StartAsync(Limits);
        using var log = daemon.LogTo(output);
        using var client = new RawGrpcClient(new HttpClient(new SocketsHttpHandler { EnableMultipleHttp2Connections = true })
        {
            BaseAddress = new Uri($"http://{daemon.Address}"),
            Timeout = Timeout.InfiniteTimeSpan,
        });
        await FuzzAsync(daemon, client, seed, CheapTransports, garbageSpecs: false, ProcessSequencePhase, ProcessSequenceClients);
    }

    private static readonly string[] Limits =
    [
        $"--IpcBench:MaxPublishers={MaxPublishers}",
        $"--IpcBench:MaxSubscribers={MaxSubscribers}",
        $"--IpcBench:MaxPayloadBytes={MaxPayloadBytes}",
        $"--IpcBench:MaxConcurrentScenarios={MaxConcurrentScenarios}",
        "--IpcBench:DrainTimeoutSeconds=2",
    ];

    private int Seed()
    {
        var seed = int.TryParse(Environment.GetEnvironmentVariable("IPCBENCH_FUZZ_SEED"), NumberStyles.Integer, CultureInfo.InvariantCulture, out var s)
            ? s
            : Random.Shared.Next();
        output.WriteLine($"fuzz seed {seed} (replay with IPCBENCH_FUZZ_SEED={seed})");
        return seed;
    }

    private async Task FuzzAsync(DaemonClient daemon, RawGrpcClient client, int seed, string[] cheapTransports, bool garbageSpecs, TimeSpan sequencePhase, int clients)
    {
        var transports = await daemon.ListTransportsAsync();
        var cheap = transports.Where(t => cheapTransports.Contains(t.Id) && t.Available).ToList();
        Assert.True(cheap.Count == cheapTransports.Length, $"not all of {string.Join(", ", cheapTransports)} are available");

        var run = new FuzzRun(seed, client, cheap, output);
        var clock = Stopwatch.StartNew();
        try
        {
            // 1. Malformed bytes at every method, before any scenario exists.
            var garbage = new Fuzzer(seed, run);
            foreach (var method in Control.Methods)
            {
                foreach (var body in garbage.GarbageBodies(method))
                {
                    await run.CallAsync(method, body, "garbage bytes");
                }
            }

            await AssertAliveAsync(daemon, run, "after the garbage-bytes phase");
            output.WriteLine($"garbage bytes: {run.Calls} calls in {clock.Elapsed.TotalSeconds:0.0} s");

            // 2. Many garbage specs and random requests: refusals are cheap, so this is where most field values get tried.
            if (garbageSpecs)
            {
                var startScenario = Control.FindMethodByName("StartScenario");
                await Task.WhenAll(Enumerable.Range(1, 2).Select(worker => Task.Run(async () =>
                {
                    var fuzzer = new Fuzzer(seed - worker, run);
                    for (int i = 0; i < GarbageSpecsPerWorker && run.Failures.IsEmpty; i++)
                    {
                        await run.CallAsync(startScenario, new StartScenarioRequest { Spec = fuzzer.GarbageSpec() }, "garbage spec");
                        var method = Control.Methods[i % Control.Methods.Count];
                        if (!method.IsServerStreaming)
                        {
                            await run.CallAsync(method, fuzzer.RandomMessage(method.InputType, depth: 0), "random field values");
                        }
                    }
                })));

                await AssertAliveAsync(daemon, run, "after the garbage-spec phase");
                output.WriteLine($"garbage specs: {run.Calls} calls in {clock.Elapsed.TotalSeconds:0.0} s");
            }

            // 3. Random sequences from concurrent clients, each with its own seeded generator.
            var until = clock.Elapsed + sequencePhase;
            await Task.WhenAll(Enumerable.Range(1, clients).Select(worker => Task.Run(async () =>
            {
                var fuzzer = new Fuzzer(seed + worker, run);
                while (clock.Elapsed < until && run.Failures.IsEmpty)
                {
                    await fuzzer.RandomStepAsync();
                }
            })));

            await AssertAliveAsync(daemon, run, "after the random-sequence phase");
            output.WriteLine($"all phases: {run.Calls} calls, {run.Started.Count} scenarios started, in {clock.Elapsed.TotalSeconds:0.0} s; statuses: "
                + string.Join(", ", run.Statuses.OrderBy(p => p.Key).Select(p => $"{p.Key} {p.Value}")));
        }
        finally
        {
            await StopEverythingAsync(daemon, run);
        }

        Assert.True(run.Failures.IsEmpty, $"seed {seed}: {run.Failures.Count} unexpected answers:\n{string.Join("\n", run.Failures.Take(20))}\n{daemon.Output.Describe()}");
        Assert.Contains(StatusCode.OK, run.Statuses.Keys);
        Assert.Contains(StatusCode.InvalidArgument, run.Statuses.Keys);
        Assert.Contains(StatusCode.NotFound, run.Statuses.Keys);
    }

    /// <summary>A process must not have exited; either host must still answer health checks as SERVING.</summary>
    private static async Task AssertAliveAsync(DaemonClient daemon, FuzzRun run, string when)
    {
        Assert.False(daemon is DaemonProcess { HasExited: true }, $"seed {run.Seed}: the daemon died {when}.\n{daemon.Output.Describe()}");
        var health = await new Grpc.Health.V1.Health.HealthClient(daemon.Channel).CheckAsync(new(), deadline: DateTime.UtcNow + CallTimeout);
        Assert.True(health.Status == Grpc.Health.V1.HealthCheckResponse.Types.ServingStatus.Serving,
            $"seed {run.Seed}: the daemon is {health.Status} {when}.\n{daemon.Output.Describe()}");
    }

    private static IReadOnlyList<ProcessEntry> Agents(DaemonClient daemon) => daemon switch
    {
        DaemonProcess process => process.Agents(),
        InProcessDaemon host => host.Agents(),
        _ => throw new ArgumentException(daemon.GetType().Name),
    };

    /// <summary>Stops every scenario the fuzzer started and checks that nothing is left running, agents included.</summary>
    private async Task StopEverythingAsync(DaemonClient daemon, FuzzRun run)
    {
        if (daemon is DaemonProcess { HasExited: true })
        {
            return;
        }

        foreach (var id in run.Started.Keys)
        {
            await daemon.StopScenarioAsync(id);
        }

        foreach (var id in run.Started.Keys)
        {
            var scenario = await daemon.WaitUntilFinishedAsync(id, TimeSpan.FromSeconds(30));
            Assert.True(scenario.Spec.Duration is null || scenario.Spec.Duration.ToTimeSpan() <= LongestValidDuration,
                $"seed {run.Seed}: the fuzzer started a scenario longer than {LongestValidDuration.TotalMilliseconds} ms: {scenario.Spec}");
        }

        await Poll.UntilAsync(() => Agents(daemon).Count == 0, TimeSpan.FromSeconds(15),
            () => $"seed {run.Seed}: agents left after every scenario ended:\n{string.Join("\n", Agents(daemon))}");
        Assert.All(await daemon.ListScenariosAsync(), sc => Assert.True(ScenarioStates.IsFinished(sc), $"seed {run.Seed}: {sc.Id} is {sc.State}"));
        await AssertAliveAsync(daemon, run, "while stopping everything");
        output.WriteLine($"stopped {run.Started.Count} scenarios; no agents left");
    }

    /// <summary>What every worker shares: the client, the ids seen, the statuses counted and the failures found.</summary>
    private sealed class FuzzRun(int seed, RawGrpcClient client, IReadOnlyList<TransportInfo> cheap, ITestOutputHelper output)
    {
        private int _calls;

        public int Seed => seed;

        public IReadOnlyList<TransportInfo> CheapTransports => cheap;

        public ConcurrentDictionary<string, byte> Started { get; } = new();

        public ConcurrentDictionary<StatusCode, int> Statuses { get; } = new();

        public ConcurrentQueue<string> Failures { get; } = new();

        public int Calls => Volatile.Read(ref _calls);

        public Task<RawOutcome> CallAsync(MethodDescriptor method, IMessage request, string what, TimeSpan? cancelAfter = null) =>
            CallAsync(method, Frame(request.ToByteArray()), what, cancelAfter);

        /// <summary>Sends a raw request body and records the outcome; an unexpected one is a failure, not an exception, so the run goes on.</summary>
        public async Task<RawOutcome> CallAsync(MethodDescriptor method, byte[] body, string what, TimeSpan? cancelAfter = null)
        {
            Interlocked.Increment(ref _calls);
            var outcome = await client.CallAsync($"/{Service}/{method.Name}", body, cancelAfter ?? CallTimeout, expectCancel: cancelAfter is not null);
            if (outcome.Problem is { } problem)
            {
                Failures.Enqueue($"{method.Name} ({what}, {body.Length} bytes: {Preview(body)}): {problem}");
            }
            else if (outcome.Status is { } status)
            {
                Statuses.AddOrUpdate(status, 1, (_, n) => n + 1);
                if (!Allowed.Contains(status) && !(status == StatusCode.Unimplemented && DeclaredNotServedYet.Contains(method.Name)))
                {
                    Failures.Enqueue($"{method.Name} ({what}, {body.Length} bytes: {Preview(body)}): {status}: {outcome.Message}");
                }
            }

            if (method.Name == "StartScenario" && outcome.Status == StatusCode.OK && outcome.Messages.Count == 1)
            {
                var started = StartScenarioResponse.Parser.ParseFrom(outcome.Messages[0]);
                Started[started.Id] = 0;
                output.WriteLine($"started {started.Id}: {started.Scenario.Spec}");
            }

            return outcome;
        }

        private static string Preview(byte[] body) =>
            Convert.ToHexString(body, 0, Math.Min(body.Length, 48)) + (body.Length > 48 ? "..." : "");
    }
}
