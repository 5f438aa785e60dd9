using System.Globalization;
using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// One cell's sustainable-rate search as a sequence of offered rates: a ramp ×<see cref="RampFactor"/> from
/// 1/<see cref="StartDivisor"/> of the closed-loop rate (so at most five ramp probes reach it, whatever the transport's
/// speed) until a probe fails or the closed-loop rate has passed, then geometric bisection between the highest pass and
/// the lowest fail (rates span decades, so the midpoint is taken on a log scale) until they are within
/// <see cref="Resolution"/> or the steps run out. Not thread-safe: SuiteRun calls it under its lock.
/// </summary>
public sealed class RateSearchSteps(RateSearchSpec spec)
{
    public const double RampFactor = 4;
    public const double StartDivisor = 256;

    /// <summary>Bisection stops once the lowest fail is within 5 % of the highest pass: finer than run-to-run noise is not knowledge.</summary>
    public const double Resolution = 1.05;

    /// <summary>Offered rates below one message a second per publisher measure nothing in a short scenario.</summary>
    public const double MinRate = 1;

    private readonly List<RateProbeRecord> _probes = [];
    private double? _closedLoop;
    private string? _ended;

    public IReadOnlyList<RateProbeRecord> Probes => _probes;

    /// <summary>The closed-loop probe's delivered rate per publisher, or null with why it failed (which ends the search).</summary>
    public void ClosedLoop(double? perPublisher, string failure)
    {
        if (perPublisher is { } rate && rate >= MinRate)
        {
            _closedLoop = Round(rate);
        }
        else
        {
            _ended = $"no sustainable rate: the closed-loop probe {(perPublisher is null ? "failed: " + failure : "delivered under 1 msg/s")}";
        }
    }

    public void Record(RateProbeRecord probe) => _probes.Add(probe);

    /// <summary>The next rate to offer, or null once the search has ended (see <see cref="Outcome"/>).</summary>
    public double? Next()
    {
        if (_ended is not null || _closedLoop is not { } closedLoop)
        {
            return null;
        }

        var pass = _probes.Where(p => p.Passed).Select(p => p.RatePerPublisher).DefaultIfEmpty(0).Max();
        var fail = _probes.Where(p => !p.Passed && p.RatePerPublisher > pass).Select(p => p.RatePerPublisher).DefaultIfEmpty(0).Min();
        if (_probes.Count == 0)
        {
            return Round(Math.Max(MinRate, closedLoop / StartDivisor));
        }

        if (pass == 0)
        {
            var lowest = _probes[0];
            return End($"no sustainable rate: the lowest probe ({Rate(lowest.RatePerPublisher)} msg/s per publisher) failed: {lowest.Reason}");
        }

        if (fail == 0)
        {
            return pass >= closedLoop ? End($"sustains its closed-loop rate ({Rate(closedLoop)} msg/s per publisher): nothing faster to offer")
                : _probes.Count >= spec.MaxSteps ? End($"max_steps ({spec.MaxSteps}) reached while ramping: the rate is at least this")
                : Round(Math.Min(pass * RampFactor, closedLoop));
        }

        if (fail / pass <= Resolution)
        {
            return End($"bracketed within {(Resolution - 1) * 100:0} % after {_probes.Count} probes");
        }

        return _probes.Count >= spec.MaxSteps ? End($"max_steps ({spec.MaxSteps}) reached: bracketed within {(fail / pass - 1) * 100:0} %")
            : Round(Math.Sqrt(pass * fail));
    }

    public RateSearchOutcome Outcome()
    {
        var passed = _probes.Where(p => p.Passed).Select(p => p.RatePerPublisher).ToList();
        double? sustainable = passed.Count > 0 ? passed.Max() : null;
        var above = _probes.Where(p => !p.Passed && p.RatePerPublisher > (sustainable ?? 0)).Select(p => p.RatePerPublisher).ToList();
        return new RateSearchOutcome(_ended is null ? null : sustainable, above.Count > 0 ? above.Min() : null, _ended is not null, _ended ?? "searching");
    }

    /// <summary>The suite stopped or failed before the search ended: what it found so far stands, said as such.</summary>
    public void Abandon()
    {
        _ended ??= "the suite ended before the search did: the rate is at least this";
    }

    private double? End(string why)
    {
        _ended = why;
        return null;
    }

    /// <summary>Three significant digits: a rate readable in tables, and an exact key for the cell's probes.</summary>
    private static double Round(double rate)
    {
        double scale = Math.Pow(10, Math.Floor(Math.Log10(rate)) - 2);
        return Math.Round(rate / scale) * scale;
    }

    private static string Rate(double rate) => rate.ToString("#,0.##", CultureInfo.InvariantCulture);
}
