using System.CommandLine;
using System.Globalization;
using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run`'s offered-load options (issue 26): --rates sweeps the rate per publisher as a cell dimension; --find-max-rate
/// with --max-p99 (and optionally --max-steps, --min-delivered) searches each cell's sustainable rate. Kept apart from
/// RunOptions, which only lists them and hands their reading to <see cref="Read"/>.
/// </summary>
internal sealed class OfferedLoadOptions
{
    public Option<string?> Rates { get; } = new("--rates")
    {
        Description = $"Comma-separated offered rates per publisher, each {OfferedRate.Allowed}, e.g. 1000,10000,100000: every cell runs at each",
    };

    public Option<bool> FindMaxRate { get; } = new("--find-max-rate")
    {
        Description = "Per cell, search the highest rate per publisher delivered in full with latency p99 within --max-p99",
    };

    public Option<string?> MaxP99 { get; } = new("--max-p99") { Description = "With --find-max-rate: the latency p99 bound, e.g. 1ms, 250us, 0.5s (1us-10s)" };

    public Option<int> MaxSteps { get; } = new("--max-steps")
    {
        Description = $"With --find-max-rate: rate-limited probes per cell, {RateSearchSpec.MinSteps}-{RateSearchSpec.MaxMaxSteps} (default {RateSearchSpec.DefaultMaxSteps})",
        DefaultValueFactory = _ => RateSearchSpec.DefaultMaxSteps,
    };

    public Option<double> MinDelivered { get; } = new("--min-delivered")
    {
        Description = $"With --find-max-rate: the share of the offered rate a probe must deliver, (0, 1] (default {RateSearchSpec.DefaultMinDeliveredRatio})",
        DefaultValueFactory = _ => RateSearchSpec.DefaultMinDeliveredRatio,
    };

    public IEnumerable<Option> All => [Rates, FindMaxRate, MaxP99, MaxSteps, MinDelivered];

    /// <summary>
    /// The options read and their combinations checked; an ArgumentException names the option at fault. Ranges are the
    /// planner's (SuiteRates, as StartSuite checks them): `run` shows its refusal under the option's name (RunOptions.Refusal).
    /// </summary>
    /// <param name="rate">--rate: the one rate when --rates is not given.</param>
    public OfferedLoad Read(ParseResult result, double rate, int repetitions, int latencySampleEvery)
    {
        var rates = ParseRates(result.GetValue(Rates), rate);
        bool find = result.GetValue(FindMaxRate);
        string? maxP99 = result.GetValue(MaxP99);
        bool tuned = result.GetResult(MaxSteps) is { Implicit: false } || result.GetResult(MinDelivered) is { Implicit: false };
        if (!find)
        {
            return maxP99 is not null || tuned
                ? throw new ArgumentException("--max-p99, --max-steps and --min-delivered: only with --find-max-rate (they bound its search)")
                : new OfferedLoad(rates, null) { Swept = result.GetValue(Rates) is not null };
        }

        if (result.GetValue(Rates) is not null || rate != 0)
        {
            throw new ArgumentException("--find-max-rate searches the rate itself: leave out --rate and --rates");
        }

        if (repetitions != 1)
        {
            throw new ArgumentException("--find-max-rate runs each cell's search once: leave --repetitions at 1");
        }

        var bound = maxP99 is null ? throw new ArgumentException("--find-max-rate needs --max-p99, the latency p99 bound, e.g. --max-p99 1ms")
            : ParseLatency(maxP99);
        return new OfferedLoad([0], new RateSearchSpec(bound, result.GetValue(MinDelivered), result.GetValue(MaxSteps), latencySampleEvery));
    }

    private static IReadOnlyList<double> ParseRates(string? value, double rate)
    {
        if (value is null)
        {
            return [rate];
        }

        if (rate != 0)
        {
            throw new ArgumentException("--rates: give the rates in --rates or one rate in --rate, not both");
        }

        var rates = new List<double>();
        foreach (var part in value.Split(',', StringSplitOptions.TrimEntries))
        {
            rates.Add(double.TryParse(part, NumberStyles.Float, CultureInfo.InvariantCulture, out var parsed) ? parsed
                : throw new ArgumentException($"--rates: '{part}' is not a number (rates per publisher, e.g. 1000,10000)"));
        }

        return rates;
    }

    private static TimeSpan ParseLatency(string value)
    {
        var trimmed = value.Trim();
        // ParseDuration knows ms and up; a p99 bound is often in microseconds.
        var span = trimmed.EndsWith("us", StringComparison.Ordinal) || trimmed.EndsWith("µs", StringComparison.Ordinal)
            ? (double.TryParse(trimmed[..^2], NumberStyles.Float, CultureInfo.InvariantCulture, out var micros) && micros >= 0 ? TimeSpan.FromMicroseconds(micros)
                : throw new ArgumentException($"--max-p99: '{value}' is not a duration like 1ms, 250us or 0.5s"))
            : RunOptions.ParseDuration("--max-p99", trimmed);
        return span;
    }
}

/// <summary>The offered rates per publisher every cell runs at, or one closed-loop rate and the search.</summary>
internal sealed record OfferedLoad(IReadOnlyList<double> Rates, RateSearchSpec? Search)
{
    /// <summary>The rates came from --rates (a sweep, even of one), not --rate.</summary>
    public bool Swept { get; init; }
}
