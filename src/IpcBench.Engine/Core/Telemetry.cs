using System.Diagnostics;

namespace IpcBench.Daemon.Core;

/// <summary>
/// The daemon's traces: a span per control-plane call and a trace per scenario (see ScenarioRun). Activities cost
/// nothing unless a listener is attached, which only the OTLP exporter does (OTEL_EXPORTER_OTLP_ENDPOINT).
/// </summary>
public static class Telemetry
{
    public const string SourceName = "IpcBench.Daemon";

    public static readonly ActivitySource Source = new(SourceName, BuildInfo.Current.Version);
}
