using Google.Protobuf.WellKnownTypes;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>Short scenario specs: these tests measure on a 2-core machine, so every run is a second or two.</summary>
internal static class Specs
{
    public static ScenarioSpec Stream(string transport, int publishers, int subscribers, TimeSpan? duration, TimeSpan? warmup = null, int payloadBytes = 64)
    {
        var spec = new ScenarioSpec
        {
            Transport = transport,
            Publishers = publishers,
            Subscribers = subscribers,
            PayloadBytes = payloadBytes,
            Name = "BenchDaemon.Tests",
        };
        if (duration is { } d)
        {
            spec.Duration = Duration.FromTimeSpan(d);
        }

        if (warmup is { } w)
        {
            spec.Warmup = Duration.FromTimeSpan(w);
        }

        return spec;
    }

    public static ScenarioSpec With(this ScenarioSpec spec, Action<ScenarioSpec> change)
    {
        var copy = spec.Clone();
        change(copy);
        return copy;
    }

    /// <summary>What <see cref="Paced"/> offers per publisher unless told: enough traffic for every contract, little CPU.</summary>
    public const double PacedRate = 2000;

    /// <summary>
    /// <paramref name="spec"/> offered at <paramref name="ratePerPublisher"/> with BLOCK waits (which every transport
    /// offers): it neither spins nor saturates the machine, as <see cref="LightCollection"/>'s tests must not.
    /// </summary>
    public static ScenarioSpec Paced(this ScenarioSpec spec, double ratePerPublisher = PacedRate) => spec.With(s =>
    {
        s.RatePerPublisher = ratePerPublisher;
        s.WaitStrategy = WaitStrategy.Block;
    });

    public static TimeSpan Seconds(double seconds) => TimeSpan.FromSeconds(seconds);

    public static TimeSpan Milliseconds(double milliseconds) => TimeSpan.FromMilliseconds(milliseconds);
}

internal static class ScenarioStates
{
    public static bool IsFinished(Scenario scenario) => IsFinished(scenario.State);

    public static bool IsFinished(ScenarioState state) =>
        state is ScenarioState.Completed or ScenarioState.Stopped or ScenarioState.Failed;
}
