using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Model;
using V1 = IpcBench.V1;

namespace IpcBench.Daemon.Schema;

/// <summary>A soak judgement to and from control.proto's SoakSummary (stored results carry it as written).</summary>
internal static class SoakProtos
{
    public static V1.SoakJudgement ToProto(SoakSummary s)
    {
        var proto = new V1.SoakJudgement
        {
            Verdict = (V1.SoakVerdict)((int)s.Verdict + 1),
            JudgedOver = Duration.FromTimeSpan(s.JudgedOver),
            Window = Duration.FromTimeSpan(s.Window),
            Throughput = ToProto(s.Throughput),
            LatencyP99 = ToProto(s.LatencyP99Ns),
            LastP50 = ScenarioProtos.Nanoseconds(s.LastP50Ns),
            LastP99 = ScenarioProtos.Nanoseconds(s.LastP99Ns),
            LastP999 = ScenarioProtos.Nanoseconds(s.LastP999Ns),
        };
        proto.Reasons.AddRange(s.Reasons);
        if (s.FirstWindowMessagesPerSecond is { } first)
        {
            proto.FirstWindowMessagesPerSecond = first;
        }

        if (s.LastWindowMessagesPerSecond is { } last)
        {
            proto.LastWindowMessagesPerSecond = last;
        }

        foreach (var process in s.Processes)
        {
            var p = new V1.SoakProcess { Role = process.Role, Index = process.Index };
            p.Resources.AddRange(process.Resources.Select(r => new V1.SoakResourceTrend
            {
                Resource = (V1.SoakResource)((int)r.Resource + 1),
                Latest = r.Latest,
                Trend = ToProto(r.Trend),
            }));
            proto.Processes.Add(p);
        }

        return proto;
    }

    public static SoakSummary? FromProto(V1.SoakJudgement? s) => s is null || s.Verdict == V1.SoakVerdict.Unspecified ? null : new(
        (SoakStatus)((int)s.Verdict - 1),
        [.. s.Reasons],
        s.JudgedOver?.ToTimeSpan() ?? TimeSpan.Zero,
        s.Window?.ToTimeSpan() ?? TimeSpan.Zero,
        FromProto(s.Throughput),
        s.HasFirstWindowMessagesPerSecond ? s.FirstWindowMessagesPerSecond : null,
        s.HasLastWindowMessagesPerSecond ? s.LastWindowMessagesPerSecond : null,
        FromProto(s.LatencyP99),
        s.LastP50 is { } p50 ? ScenarioProtos.ToNanoseconds(p50) : null,
        s.LastP99 is { } p99 ? ScenarioProtos.ToNanoseconds(p99) : null,
        s.LastP999 is { } p999 ? ScenarioProtos.ToNanoseconds(p999) : null,
        [.. s.Processes.Select(p => new ProcessTrends(p.Role, p.Index,
            [.. p.Resources.Where(r => r.Resource != V1.SoakResource.Unspecified)
                .Select(r => new ResourceTrend((ProcessResource)((int)r.Resource - 1), r.Latest, FromProto(r.Trend)))]))]);

    private static V1.SoakTrend ToProto(TrendPair t) => new() { SinceStart = ToProto(t.SinceStart), LastWindow = ToProto(t.LastWindow), Recent = ToProto(t.Recent) };

    private static V1.SoakSlope? ToProto(TrendSlope? s) => s is null ? null : new()
    {
        PerHour = s.PerHour,
        CiLowPerHour = s.LowPerHour,
        CiHighPerHour = s.HighPerHour,
        Points = s.Points,
        Span = Duration.FromTimeSpan(s.Span),
        Mean = s.Mean,
    };

    private static TrendPair FromProto(V1.SoakTrend? t) => new(FromProto(t?.SinceStart), FromProto(t?.LastWindow), FromProto(t?.Recent));

    private static TrendSlope? FromProto(V1.SoakSlope? s) => s is null ? null
        : new(s.PerHour, s.CiLowPerHour, s.CiHighPerHour, s.Points, s.Span?.ToTimeSpan() ?? TimeSpan.Zero, s.Mean);
}
