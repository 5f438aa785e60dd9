using IpcBench.V1;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Checks on one scenario result that all run before any fails, so a failure lists every broken expectation at once,
/// followed by the scenario as JSON and the daemon's output.
/// </summary>
internal sealed class ScenarioExpectations(Scenario scenario, DaemonClient daemon)
{
    private readonly List<string> _failures = [];

    public Scenario Scenario => scenario;

    public ScenarioStats Stats => scenario.Stats ?? new ScenarioStats();

    public ScenarioExpectations That(bool condition, string expectation)
    {
        if (!condition)
        {
            _failures.Add(expectation);
        }

        return this;
    }

    public ScenarioExpectations Equal<T>(T expected, T actual, string what)
    {
        if (!EqualityComparer<T>.Default.Equals(expected, actual))
        {
            _failures.Add($"{what}: expected {expected}, got {actual}");
        }

        return this;
    }

    public ScenarioExpectations Between(double min, double max, double actual, string what)
    {
        if (!(actual >= min && actual <= max))
        {
            _failures.Add($"{what}: expected {min}..{max}, got {actual}");
        }

        return this;
    }

    /// <summary>State COMPLETED, no error, and every message delivered to every subscriber it was addressed to, intact and once.</summary>
    public ScenarioExpectations CompletedWithoutLoss(int subscribersPerPublisher) => EndedWithoutLoss(ScenarioState.Completed, subscribersPerPublisher);

    /// <summary>As <see cref="CompletedWithoutLoss"/>, for a scenario that ended in <paramref name="state"/> (STOPPED: stopped by a user or a shutdown).</summary>
    public ScenarioExpectations EndedWithoutLoss(ScenarioState state, int subscribersPerPublisher)
    {
        Equal(state, scenario.State, "state");
        Equal(string.Empty, scenario.Error, "error");
        That(scenario.Stats is not null, "stats are present");
        That(Stats.MessagesSent > 0, "messages_sent > 0");
        Equal(Stats.MessagesSent * (ulong)subscribersPerPublisher, Stats.MessagesExpected, $"messages_expected (messages_sent × {subscribersPerPublisher})");
        Equal(Stats.MessagesSent * (ulong)subscribersPerPublisher, Stats.MessagesReceived, $"messages_received (messages_sent × {subscribersPerPublisher})");
        Equal(0UL, Stats.MessagesLost, "messages_lost");
        Equal(0UL, Stats.MessagesCorrupted, "messages_corrupted");
        Equal(0UL, Stats.MessagesDuplicated, "messages_duplicated");
        return this;
    }

    /// <summary>A round trip's latency: its kind, samples taken, and ordered percentiles above zero.</summary>
    public ScenarioExpectations RoundTripLatencyMeasured()
    {
        var latency = Stats.Latency ?? new LatencyStats();
        return Equal(LatencyKind.RoundTrip, latency.Kind, "latency.kind")
            .That(latency.Samples > 0, "latency.samples > 0")
            .That(latency.P50 is not null && latency.P50.ToTimeSpan() > TimeSpan.Zero, "latency.p50 > 0")
            .That(latency.P99 is not null && latency.P99.ToTimeSpan() >= latency.P50?.ToTimeSpan(), "latency.p99 >= p50");
    }

    public void Verify()
    {
        if (_failures.Count > 0)
        {
            throw new Xunit.Sdk.XunitException(
                $"Scenario {scenario.Id} ({scenario.Spec?.Transport}) broke {_failures.Count} expectation(s):\n  - "
                + string.Join("\n  - ", _failures) + "\n" + daemon.Describe(scenario));
        }
    }
}
