using System.Globalization;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Reports;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// A SuiteSpec's offered load, checked: the rates of a sweep (rates_per_publisher, a cell dimension) or a
/// sustainable-rate search (rate_search), each refusal naming the field and what it allows.
/// </summary>
public static class SuiteRates
{
    /// <summary>The offered rates the matrix's cells run at: the sweep's, or the one scalar rate.</summary>
    public static IReadOnlyList<double> Sweep(SuiteSpec spec)
    {
        if (spec.RatesPerPublisher.Count == 0)
        {
            return [spec.RatePerPublisher];
        }

        if (spec.RatePerPublisher != 0)
        {
            throw Invalid("spec.rates_per_publisher", $"excludes rate_per_publisher (got {Text(spec.RatePerPublisher)}): give the rates in one of them");
        }

        var seen = new HashSet<double>();
        for (int i = 0; i < spec.RatesPerPublisher.Count; i++)
        {
            double rate = spec.RatesPerPublisher[i];
            if (!OfferedRate.InRange(rate))
            {
                throw Invalid("spec.rates_per_publisher", $"[{i}] must be {OfferedRate.Allowed} per publisher; got {Text(rate)}");
            }

            if (!seen.Add(rate))
            {
                throw Invalid("spec.rates_per_publisher", $"[{i}] repeats {Text(rate)}: each rate once (repetitions repeat a cell)");
            }
        }

        return [.. spec.RatesPerPublisher];
    }

    /// <summary>The suite's search: its own rate_search, else its preset's; null for none.</summary>
    public static RateSearchSpec? Search(SuiteSpec spec, ReferencePreset? preset)
    {
        if (spec.RateSearch is null && preset?.SearchMaxP99Latency is null)
        {
            return null;
        }

        string field = spec.RateSearch is null ? "spec.repetitions" : "spec.rate_search";
        if (spec.Repetitions > 1 || spec.HasTargetPrecisionPercent)
        {
            throw Invalid(field, $"a rate search runs each cell's search once: repetitions must be 0 or 1 and target_precision_percent absent; got repetitions {spec.Repetitions}");
        }

        if (spec.RateSearch is not { } search)
        {
            return new RateSearchSpec(preset!.SearchMaxP99Latency!.Value, RateSearchSpec.DefaultMinDeliveredRatio, RateSearchSpec.DefaultMaxSteps, spec.LatencySampleEvery);
        }

        if (spec.RatesPerPublisher.Count > 0 || spec.RatePerPublisher != 0)
        {
            throw Invalid("spec.rate_search", "searches the offered rate itself: leave rate_per_publisher 0 and rates_per_publisher empty");
        }

        return new RateSearchSpec(LatencyBound(search.MaxP99Latency), Ratio(search.MinDeliveredRatio), Steps(search.MaxSteps), spec.LatencySampleEvery);
    }

    public static IpcBench.V1.RateSearch ToProto(RateSearchSpec search) => new()
    {
        MaxP99Latency = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(search.MaxP99Latency),
        MinDeliveredRatio = search.MinDeliveredRatio,
        MaxSteps = search.MaxSteps,
    };

    private static TimeSpan LatencyBound(Google.Protobuf.WellKnownTypes.Duration? value)
    {
        const string Field = "spec.rate_search.max_p99_latency";
        string allowed = $"{RateSearchSpec.MinLatencyBound.TotalMicroseconds:0} µs to {RateSearchSpec.MaxLatencyBound.TotalSeconds:0} s";
        if (value is null)
        {
            throw Invalid(Field, $"is required: the latency p99 a sustained rate keeps within, {allowed}");
        }

        bool inRange = value.Seconds >= 0 && value.Nanos >= 0 && value.Nanos < 1_000_000_000 && value.Seconds <= (long)RateSearchSpec.MaxLatencyBound.TotalSeconds;
        var span = inRange ? value.ToTimeSpan() : TimeSpan.Zero;
        return inRange && span >= RateSearchSpec.MinLatencyBound && span <= RateSearchSpec.MaxLatencyBound ? span
            : throw Invalid(Field, $"must be {allowed}; got {value.Seconds}s {value.Nanos}ns");
    }

    private static double Ratio(double ratio) =>
        ratio == 0 ? RateSearchSpec.DefaultMinDeliveredRatio
        : ratio > 0 && ratio <= 1 ? ratio
        : throw Invalid("spec.rate_search.min_delivered_ratio", $"must be > 0 and <= 1 (0 means {RateSearchSpec.DefaultMinDeliveredRatio}); got {Text(ratio)}");

    private static int Steps(int steps) =>
        steps == 0 ? RateSearchSpec.DefaultMaxSteps
        : steps >= RateSearchSpec.MinSteps && steps <= RateSearchSpec.MaxMaxSteps ? steps
        : throw Invalid("spec.rate_search.max_steps", $"must be {RateSearchSpec.MinSteps}..{RateSearchSpec.MaxMaxSteps} (0 means {RateSearchSpec.DefaultMaxSteps}); got {steps}");

    private static string Text(double value) => value.ToString(CultureInfo.InvariantCulture);

    private static RequestRefusedException Invalid(string field, string reason) => new(RefusalKind.InvalidArgument, field, reason);
}
