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

/// <summary>The fuzzer: what one client of <see cref="ControlPlaneFuzzTests"/> sends.</summary>
public sealed partial class ControlPlaneFuzzTests
{
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
}
