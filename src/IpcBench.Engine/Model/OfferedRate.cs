using System.Globalization;

namespace IpcBench.Daemon.Model;

/// <summary>
/// The offered rate per publisher a scenario may run at. One range for ScenarioSpec.rate_per_publisher,
/// SuiteSpec.rates_per_publisher and `run --rates`, so the CLI cannot accept what the daemon refuses; each caller
/// names its own option or field in front of <see cref="Allowed"/>.
/// </summary>
public static class OfferedRate
{
    /// <summary>A billion messages a second per publisher is beyond any transport here; more is a typo.</summary>
    public const double Max = 1e9;

    public static string Allowed { get; } = string.Create(CultureInfo.InvariantCulture, $"0 (closed loop) to {Max:0e0} msg/s");

    /// <summary>NaN and infinities are out: a JSON client can send them, and neither is a rate.</summary>
    public static bool InRange(double rate) => double.IsFinite(rate) && rate >= 0 && rate <= Max;
}
