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
public sealed class ControlPlaneFuzzTests(ITestOutputHelper output)
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

    /// <summary>One client's random choices, all drawn from its seeded <see cref="Random"/>.</summary>
    private sealed class Fuzzer(int seed, FuzzRun run)
    {
        private readonly Random _random = new(seed);

        public bool Chance(double p) => _random.NextDouble() < p;

        private T Pick<T>(IReadOnlyList<T> items) => items[_random.Next(items.Count)];

        /// <summary>One random step of a client session.</summary>
        public async Task RandomStepAsync()
        {
            var method = Pick(Control.Methods.ToList());
            if (method.Name == "StartScenario" && Chance(0.3))
            {
                // Start then stop at once: the stop lands while agents are still being launched.
                var started = await run.CallAsync(method, new StartScenarioRequest { Spec = TinyValidSpec() }, "start, then stop at once");
                if (started.Status == StatusCode.OK)
                {
                    var id = StartScenarioResponse.Parser.ParseFrom(started.Messages[0]).Id;
                    if (Chance(0.5))
                    {
                        await Task.Delay(_random.Next(0, 30));
                    }

                    await run.CallAsync(Control.FindMethodByName("StopScenario"), new StopScenarioRequest { Id = id }, "stop right after start");
                }

                return;
            }

            if (Chance(0.1))
            {
                var bodies = GarbageBodies(method).ToList();
                await run.CallAsync(method, Pick(bodies), "garbage bytes in a sequence");
                return;
            }

            var request = Generators.TryGetValue(method.Name, out var generate) ? generate(this) : RandomMessage(method.InputType, depth: 0);
            // A watch is sometimes cut short by the client (a disconnect mid-stream); otherwise it runs to the end.
            TimeSpan? cancelAfter = method.IsServerStreaming && Chance(0.3) ? TimeSpan.FromMilliseconds(_random.Next(1, 400)) : null;
            await run.CallAsync(method, request, "random request", cancelAfter);
        }

        /// <summary>A spec the daemon accepts and runs briefly: 1:1 on a cheap transport, small payload, at most 300 ms.</summary>
        public ScenarioSpec TinyValidSpec()
        {
            var transport = Pick(run.CheapTransports);
            // Spinning takes a whole core while it lasts; the others wait politely.
            var waits = transport.WaitStrategies.Where(w => w != WaitStrategy.Spin).Append(WaitStrategy.Unspecified).ToList();
            var spec = new ScenarioSpec
            {
                Transport = transport.Id,
                Publishers = 1,
                Subscribers = 1,
                PayloadBytes = Pick([8, 64, 1000, 4096]),
                Duration = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(_random.Next(20, (int)LongestValidDuration.TotalMilliseconds + 1))),
                RatePerPublisher = Chance(0.5) ? 0 : _random.Next(1, 20_000),
                Topology = Pick([Topology.Unspecified, Topology.AllToAll, Topology.Paired]),
                PayloadAccess = Pick([PayloadAccess.Unspecified, PayloadAccess.Full, PayloadAccess.HeaderOnly]),
                Mode = transport.SupportsRoundTrip && Chance(0.3) ? Mode.RoundTrip : Pick([Mode.Unspecified, Mode.Stream]),
                WaitStrategy = Pick(waits),
                Name = Chance(0.5) ? "fuzz" : RandomString(_random.Next(0, 200)),
            };
            if (Chance(0.3))
            {
                spec.Warmup = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(_random.Next(0, 50)));
            }

            return spec;
        }

        /// <summary>
        /// A tiny valid spec with one to three fields replaced by garbage. Every corruption of a field that decides cost
        /// (durations, counts, payload) is out of range, so a garbage spec can never start an expensive scenario.
        /// </summary>
        public ScenarioSpec GarbageSpec()
        {
            var spec = TinyValidSpec();
            if (Chance(0.05))
            {
                return new ScenarioSpec();
            }

            for (int i = _random.Next(1, 4); i > 0; i--)
            {
                switch (_random.Next(12))
                {
                    case 0:
                        spec.Transport = Pick(["", " ", "carrier-pigeon", "UDS", "uds ", "uds\0", "../../etc/passwd", "%s%n", "ünïcødé-🚀",
                            new string('x', _random.Next(200, 100_000)), RandomString(_random.Next(1, 50))]);
                        break;
                    case 1:
                        spec.Publishers = Pick([0, -1, int.MinValue, int.MaxValue, MaxPublishers + 1, -_random.Next()]);
                        break;
                    case 2:
                        spec.Subscribers = Pick([0, -1, int.MinValue, int.MaxValue, MaxSubscribers + 1, _random.Next(MaxSubscribers + 1, int.MaxValue)]);
                        break;
                    case 3:
                        spec.PayloadBytes = Pick([0, -1, int.MinValue, int.MaxValue, MaxPayloadBytes + 1, _random.Next(MaxPayloadBytes + 1, int.MaxValue)]);
                        break;
                    case 4:
                        spec.Duration = GarbageDuration(allowZero: false);
                        break;
                    case 5:
                        spec.Warmup = GarbageDuration(allowZero: true);
                        break;
                    case 6:
                        spec.RatePerPublisher = Pick([double.NaN, double.PositiveInfinity, double.NegativeInfinity, -1, -double.Epsilon, 1e9 + 1,
                            double.MaxValue, -double.MaxValue, -_random.NextDouble() * 1e6]);
                        break;
                    case 7:
                        spec.Topology = (Topology)UnknownEnumNumber(3);
                        break;
                    case 8:
                        spec.PayloadAccess = (PayloadAccess)UnknownEnumNumber(3);
                        break;
                    case 9:
                        spec.Mode = (Mode)UnknownEnumNumber(3);
                        break;
                    case 10:
                        spec.WaitStrategy = (WaitStrategy)UnknownEnumNumber(4);
                        break;
                    default:
                        spec.Name = Chance(0.2) ? new string('n', 5 * 1024 * 1024) : RandomString(_random.Next(201, 20_000));
                        break;
                }
            }

            return spec;
        }

        /// <summary>Invalid durations only: negative, out of protobuf's range, nanos out of range, zero (when not allowed) or over a year.</summary>
        private Duration GarbageDuration(bool allowZero)
        {
            var choices = new List<Duration>
            {
                new() { Seconds = -1 },
                new() { Nanos = -1 },
                new() { Seconds = 1, Nanos = -5 },
                new() { Nanos = 1_000_000_000 },
                new() { Nanos = int.MaxValue },
                new() { Seconds = long.MaxValue },
                new() { Seconds = long.MinValue },
                new() { Seconds = Duration.MaxSeconds + 1 },
                new() { Seconds = 366L * 24 * 3600 },
                new() { Seconds = -_random.NextInt64(1, long.MaxValue) },
                new() { Seconds = _random.NextInt64(366L * 24 * 3600, long.MaxValue) },
            };
            if (!allowZero)
            {
                choices.Add(new Duration());
            }

            return Pick(choices);
        }

        private int UnknownEnumNumber(int firstUnknown) =>
            Pick([firstUnknown, firstUnknown + 1, -1, int.MinValue, int.MaxValue, _random.Next(firstUnknown, int.MaxValue), -_random.Next(1, int.MaxValue)]);

        /// <summary>A real id (started by any client), a well-formed unknown one, or junk.</summary>
        public string SomeId()
        {
            var known = run.Started.Keys.ToList();
            if (known.Count > 0 && Chance(0.5))
            {
                return Pick(known);
            }

            return Pick([Convert.ToHexStringLower(RandomBytes(6)), "", " ", "0123456789ab", "../agent.sock", new string('f', 10_000),
                RandomString(_random.Next(1, 40)), Pick(known.DefaultIfEmpty("x").ToList()).ToUpperInvariant()]);
        }

        /// <summary>Request bodies that are not one well-formed message of the method's request type, or barely are.</summary>
        public IEnumerable<byte[]> GarbageBodies(MethodDescriptor method)
        {
            var valid = (Generators.TryGetValue(method.Name, out var generate) ? generate(this) : RandomMessage(method.InputType, 0)).ToByteArray();
            yield return [];
            yield return [0];
            yield return [0, 0, 0];
            yield return RandomBytes(_random.Next(1, 64));
            yield return Frame(RandomBytes(_random.Next(1, 64)));
            yield return Frame(RandomBytes(_random.Next(64, 4096)));
            // Wrong compression flag: compressed (never negotiated) and flags no version of gRPC defines.
            foreach (byte flag in new byte[] { 1, 2, 0x80, 0xff })
            {
                var framed = Frame(valid);
                framed[0] = flag;
                yield return framed;
            }

            // Truncated frames: the header promises more than follows, or the message itself is cut.
            var truncated = Frame(valid);
            BinaryPrimitives.WriteUInt32BigEndian(truncated.AsSpan(1), (uint)valid.Length + (uint)_random.Next(1, 1000));
            yield return truncated;
            if (valid.Length > 1)
            {
                var cut = valid[.._random.Next(1, valid.Length)];
                yield return Frame(cut);
                yield return Frame(valid)[..^_random.Next(1, valid.Length)];
            }

            // Too large to accept (RESOURCE_EXHAUSTED, before the bytes arrive).
            yield return [0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3];
            // Two messages for a method that takes one.
            yield return [.. Frame(valid), .. Frame(valid)];
            // A valid message with some bits flipped: often decodable, with odd values or unknown fields.
            for (int i = 0; i < 4; i++)
            {
                var flipped = (byte[])valid.Clone();
                for (int j = 0; j < Math.Max(1, flipped.Length / 8); j++)
                {
                    if (flipped.Length > 0)
                    {
                        flipped[_random.Next(flipped.Length)] ^= (byte)(1 << _random.Next(8));
                    }
                }

                yield return Frame(flipped);
            }

            // Protobuf that no parser should accept: bad wire types, lengths past the end, endless varints, deep nesting.
            yield return Frame([0x0f, 0x01]);
            yield return Frame([0x0a, 0x7f, 0x01]);
            yield return Frame([0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
            yield return Frame([.. Enumerable.Repeat(new byte[] { 0x0a, 0x02 }, 200).SelectMany(b => b)]);
            yield return Frame(NestedGroups(200));
        }

        /// <summary>A message of <paramref name="type"/> with random values in a random subset of its fields.</summary>
        public IMessage RandomMessage(MessageDescriptor type, int depth)
        {
            var message = type.Parser.ParseFrom(ByteString.Empty);
            foreach (var field in type.Fields.InFieldNumberOrder())
            {
                if (field.IsMap || !Chance(0.6))
                {
                    continue;
                }

                if (field.IsRepeated)
                {
                    var list = (System.Collections.IList)field.Accessor.GetValue(message);
                    for (int i = _random.Next(0, 4); i > 0; i--)
                    {
                        if (RandomValue(field, depth) is { } item)
                        {
                            list.Add(item);
                        }
                    }
                }
                else if (RandomValue(field, depth) is { } value)
                {
                    field.Accessor.SetValue(message, value);
                }
            }

            return message;
        }

        private object? RandomValue(FieldDescriptor field, int depth) => field.FieldType switch
        {
            FieldType.String => field.Name.EndsWith("id", StringComparison.Ordinal) ? SomeId() : RandomString(_random.Next(0, 64)),
            FieldType.Bytes => ByteString.CopyFrom(RandomBytes(_random.Next(0, 64))),
            FieldType.Bool => Chance(0.5),
            FieldType.Int32 or FieldType.SInt32 or FieldType.SFixed32 => Pick([0, 1, -1, int.MaxValue, int.MinValue, _random.Next()]),
            FieldType.UInt32 or FieldType.Fixed32 => Pick([0u, 1u, uint.MaxValue, (uint)_random.Next()]),
            FieldType.Int64 or FieldType.SInt64 or FieldType.SFixed64 => Pick([0L, -1L, long.MaxValue, long.MinValue, _random.NextInt64()]),
            FieldType.UInt64 or FieldType.Fixed64 => Pick([0UL, ulong.MaxValue, (ulong)_random.NextInt64()]),
            FieldType.Double => Pick([0.0, -1.0, double.NaN, double.PositiveInfinity, double.MaxValue, _random.NextDouble() * 1e12]),
            FieldType.Float => Pick([0f, -1f, float.NaN, float.NegativeInfinity, float.MaxValue]),
            // Numbers the enum does not define, as often as ones it does: proto3 keeps them, so handlers must cope.
            FieldType.Enum => Chance(0.5) ? Pick(field.EnumType.Values.ToList()).Number : UnknownEnumNumber(field.EnumType.Values.Max(v => v.Number) + 1),
            FieldType.Message when field.MessageType.FullName == Duration.Descriptor.FullName =>
                Chance(0.5) ? GarbageDuration(allowZero: true) : Duration.FromTimeSpan(TimeSpan.FromMilliseconds(_random.Next(0, 300))),
            FieldType.Message when field.MessageType.FullName == ScenarioSpec.Descriptor.FullName => GarbageSpec(),
            FieldType.Message when depth < 3 => RandomMessage(field.MessageType, depth + 1),
            _ => null,
        };

        private string RandomString(int length)
        {
            var chars = new char[length];
            for (int i = 0; i < length; i++)
            {
                chars[i] = _random.Next(10) switch
                {
                    0 => (char)_random.Next(0, 32),
                    1 => (char)_random.Next(0x80, 0xd7ff),
                    _ => (char)_random.Next(32, 127),
                };
            }

            return new string(chars);
        }

        private byte[] RandomBytes(int length)
        {
            var bytes = new byte[length];
            _random.NextBytes(bytes);
            return bytes;
        }

        /// <summary>Start-group tags nested <paramref name="depth"/> deep (field 15), past protobuf's recursion limit of 100.</summary>
        private static byte[] NestedGroups(int depth) =>
            [.. Enumerable.Repeat((byte)0x7b, depth), .. Enumerable.Repeat((byte)0x7c, depth)];
    }

    private static byte[] Frame(byte[] message)
    {
        var framed = new byte[5 + message.Length];
        BinaryPrimitives.WriteUInt32BigEndian(framed.AsSpan(1), (uint)message.Length);
        message.CopyTo(framed, 5);
        return framed;
    }

    /// <summary>The answer to one raw call: its status and messages, or what was wrong with the answer itself.</summary>
    private sealed record RawOutcome(StatusCode? Status, string? Message, IReadOnlyList<byte[]> Messages, string? Problem);

    /// <summary>
    /// gRPC over h2c from raw bytes, so requests can be anything at all; Grpc.Net.Client would only send well-formed ones.
    /// </summary>
    private sealed class RawGrpcClient(HttpClient http) : IDisposable
    {
        private readonly HttpClient _http = http;

        public async Task<RawOutcome> CallAsync(string path, byte[] body, TimeSpan timeout, bool expectCancel)
        {
            using var request = new HttpRequestMessage(HttpMethod.Post, path)
            {
                Content = new ByteArrayContent(body),
                Version = HttpVersion.Version20,
                VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            };
            request.Content.Headers.ContentType = MediaTypeHeaderValue.Parse("application/grpc");
            request.Headers.TE.Add(new TransferCodingWithQualityHeaderValue("trailers"));
            using var cts = new CancellationTokenSource(timeout);
            try
            {
                using var response = await _http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cts.Token);
                if (expectCancel && cts.IsCancellationRequested)
                {
                    // Hung up on purpose before the answer came: over a real connection nothing follows a reset, but the
                    // in-process host still answers its handler's reaction to the hang-up (an aborted body read).
                    return new RawOutcome(null, null, [], null);
                }

                if (response.StatusCode != HttpStatusCode.OK)
                {
                    return Problem($"HTTP {(int)response.StatusCode} instead of a gRPC answer");
                }

                if (ReadStatus(response.Headers) is { } trailersOnly)
                {
                    return new RawOutcome(trailersOnly.Code, trailersOnly.Message, [], null);
                }

                var content = await response.Content.ReadAsByteArrayAsync(cts.Token);
                var messages = new List<byte[]>();
                for (int offset = 0; offset < content.Length;)
                {
                    if (content.Length - offset < 5)
                    {
                        return Problem("the response ends inside a message header");
                    }

                    var length = (int)BinaryPrimitives.ReadUInt32BigEndian(content.AsSpan(offset + 1));
                    if (content.Length - offset - 5 < length)
                    {
                        return Problem("the response ends inside a message");
                    }

                    messages.Add(content.AsSpan(offset + 5, length).ToArray());
                    offset += 5 + length;
                }

                return ReadStatus(response.TrailingHeaders) is { } status
                    ? new RawOutcome(status.Code, status.Message, messages, null)
                    : Problem("the response ended without grpc-status");
            }
            catch (OperationCanceledException) when (cts.IsCancellationRequested)
            {
                // The client hung up on purpose (a watch cut short): there is no status to judge. Otherwise the server hung.
                return expectCancel ? new RawOutcome(null, null, [], null) : Problem($"no answer within {timeout.TotalSeconds:0} s");
            }
            catch (HttpRequestException e)
            {
                return Problem($"the connection failed: {e.Message}");
            }
        }

        public void Dispose() => _http.Dispose();

        private static RawOutcome Problem(string problem) => new(null, null, [], problem);

        private static (StatusCode Code, string? Message)? ReadStatus(HttpHeaders headers)
        {
            if (!headers.TryGetValues("grpc-status", out var values))
            {
                return null;
            }

            var message = headers.TryGetValues("grpc-message", out var m) ? Uri.UnescapeDataString(string.Join(",", m)) : null;
            return int.TryParse(values.First(), NumberStyles.None, CultureInfo.InvariantCulture, out var code)
                ? ((StatusCode)code, message)
                : (StatusCode.Unknown, $"grpc-status '{values.First()}'");
        }
    }
}
