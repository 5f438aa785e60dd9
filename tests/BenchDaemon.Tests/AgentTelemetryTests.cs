using Google.Protobuf;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Agents export their own spans to the daemon's collector, inside the scenario's trace: they get the daemon's OTEL_*
/// settings (inherited, or handed on where they came from appsettings) and the traceparent of the span launching them.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class AgentTelemetryTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Agents_ExportSpansUnderTheScenariosTrace_WithTheDaemonsOtlpSettings()
    {
        await using var collector = OtlpHttpCollector.Start();
        await using (var daemon = await DaemonProcess.StartAsync(new Dictionary<string, string?>
        {
            ["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.Endpoint,
            ["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf",
            ["OTEL_BSP_SCHEDULE_DELAY"] = "200",
        }))
        {
            using var log = daemon.LogTo(output);
            await daemon.RunScenarioAsync(Specs.Stream("uds", 1, 2, Specs.Seconds(0.3), Specs.Seconds(0.2)).Paced());
            // Agents flush when they exit; the daemon's batch goes out within its schedule delay.
            await Poll.UntilAsync(
                () => Spans(collector).Count(s => s.Service == "ipcbench-agent" && s.Name == "agent") == 2
                    && Spans(collector).Any(s => s.Service == "ipcbench-daemon" && s.Name == "scenario"),
                TimeSpan.FromSeconds(20), () => $"spans so far: {string.Join(", ", Spans(collector).Select(s => $"{s.Service}/{s.Name}"))}");
        }

        var spans = Spans(collector);
        var scenario = spans.Single(s => s.Service == "ipcbench-daemon" && s.Name == "scenario");
        var agentsUp = spans.Single(s => s.Service == "ipcbench-daemon" && s.Name == "agents up");
        var agents = spans.Where(s => s.Service == "ipcbench-agent" && s.Name == "agent").ToList();
        Assert.All(agents, agent =>
        {
            Assert.Equal(scenario.TraceId, agent.TraceId);
            Assert.Equal(agentsUp.SpanId, agent.ParentSpanId);
            var phases = spans.Where(s => s.ParentSpanId == agent.SpanId).Select(s => s.Name).Order().ToList();
            Assert.Equal(["connect", "drain", "run", "warmup"], phases);
        });
    }

    private sealed record Span(string Service, string Name, string TraceId, string SpanId, string ParentSpanId);

    /// <summary>
    /// The spans of every export: ExportTraceServiceRequest → resource_spans (1) → resource (1) attributes (1) for
    /// service.name, scope_spans (2) → spans (2) with trace_id (1), span_id (2), parent_span_id (4) and name (5). Read
    /// field by field with protobuf's wire format, so the test needs no copy of the OTLP protos.
    /// </summary>
    private static List<Span> Spans(OtlpHttpCollector collector) =>
        [.. collector.Bodies("/v1/traces").SelectMany(body => Fields(body, 1)).SelectMany(resourceSpans =>
        {
            string service = Fields(resourceSpans, 1).SelectMany(resource => Fields(resource, 1))
                .Select(kv => (Key: Text(kv, 1), Value: Fields(kv, 2).Select(any => Text(any, 1)).FirstOrDefault()))
                .FirstOrDefault(a => a.Key == "service.name").Value ?? string.Empty;
            return Fields(resourceSpans, 2).SelectMany(scope => Fields(scope, 2))
                .Select(span => new Span(service, Text(span, 5), Hex(span, 1), Hex(span, 2), Hex(span, 4)));
        })];

    private static IEnumerable<ByteString> Fields(ByteString message, int field) => Fields(message.ToByteArray(), field);

    private static List<ByteString> Fields(byte[] message, int field)
    {
        var found = new List<ByteString>();
        var input = new CodedInputStream(message);
        for (uint tag; (tag = input.ReadTag()) != 0;)
        {
            if (WireFormat.GetTagWireType(tag) == WireFormat.WireType.LengthDelimited)
            {
                var value = input.ReadBytes();
                if (WireFormat.GetTagFieldNumber(tag) == field)
                {
                    found.Add(value);
                }
            }
            else
            {
                input.SkipLastField();
            }
        }

        return found;
    }

    private static string Text(ByteString message, int field) => Fields(message, field).FirstOrDefault()?.ToStringUtf8() ?? string.Empty;

    private static string Hex(ByteString message, int field) => Convert.ToHexString(Fields(message, field).FirstOrDefault()?.ToByteArray() ?? []);
}
