using System.Globalization;
using Serilog.Events;
using Serilog.Formatting;
using Serilog.Formatting.Json;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// One JSON object per line in the Compact Log Event Format (CLEF) that Serilog.Formatting.Compact writes (that package
/// is not on the NuGet mirror; Serilog's own JsonFormatter nests properties and repeats the template's renderings,
/// which log tools reading CLEF do not expect). Fields: @t timestamp (UTC, ISO 8601), @mt message template,
/// @m rendered message, @l level (omitted for Information, as CLEF does), @x exception, @tr/@sp trace and span id of
/// the current activity, then every property at top level (ScenarioId, SourceContext, AgentIndex, ...), a leading @
/// doubled.
/// </summary>
public sealed class CompactJsonFormatter : ITextFormatter
{
    private readonly JsonValueFormatter _values = new(typeTagName: "$type");

    public void Format(LogEvent logEvent, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(logEvent);
        ArgumentNullException.ThrowIfNull(output);
        output.Write("{\"@t\":\"");
        output.Write(logEvent.Timestamp.UtcDateTime.ToString("O", CultureInfo.InvariantCulture));
        output.Write("\",\"@mt\":");
        JsonValueFormatter.WriteQuotedJsonString(logEvent.MessageTemplate.Text, output);
        output.Write(",\"@m\":");
        JsonValueFormatter.WriteQuotedJsonString(logEvent.RenderMessage(CultureInfo.InvariantCulture), output);
        if (logEvent.Level != LogEventLevel.Information)
        {
            output.Write(",\"@l\":\"");
            output.Write(logEvent.Level.ToString());
            output.Write('"');
        }

        if (logEvent.Exception is { } exception)
        {
            output.Write(",\"@x\":");
            JsonValueFormatter.WriteQuotedJsonString(exception.ToString(), output);
        }

        if (logEvent.TraceId is { } traceId)
        {
            output.Write(",\"@tr\":\"");
            output.Write(traceId.ToHexString());
            output.Write('"');
        }

        if (logEvent.SpanId is { } spanId)
        {
            output.Write(",\"@sp\":\"");
            output.Write(spanId.ToHexString());
            output.Write('"');
        }

        foreach (var property in logEvent.Properties)
        {
            output.Write(',');
            JsonValueFormatter.WriteQuotedJsonString(property.Key.StartsWith('@') ? "@" + property.Key : property.Key, output);
            output.Write(':');
            _values.Format(property.Value, output);
        }

        output.Write('}');
        output.Write('\n');
    }
}
