using System.Globalization;
using IpcBench.V1;

namespace IpcBench.Soak;

/// <param name="Duration">Measured time of each transport's scenario (of all of them together with <paramref name="Parallel"/>).</param>
/// <param name="Transports">Transports to soak; empty: every transport the daemon reports available.</param>
/// <param name="Parallel">Run every transport's scenario at once instead of one after another.</param>
/// <param name="RatePerPublisher">Messages a second each publisher offers; null: closed loop (as fast as the subscribers take them).</param>
/// <param name="Wait">The subscribers' wait strategy on every transport (all offer BLOCK); null: each transport's default.</param>
/// <param name="Publishers">Publishers of each transport's ALL_TO_ALL scenario.</param>
/// <param name="Subscribers">Subscribers (one agent each) of each transport's scenario.</param>
public sealed record SoakOptions(
    TimeSpan Duration,
    IReadOnlyList<string> Transports,
    bool Parallel,
    int PayloadBytes,
    string? JsonPath,
    string DaemonPath,
    TimeSpan? WarmupOverride = null,
    double? RatePerPublisher = null,
    WaitStrategy? Wait = null,
    int Publishers = SoakOptions.DefaultPublishers,
    int Subscribers = SoakOptions.DefaultSubscribers)
{
    /// <summary>The topology when --topology is not given: 2:4, fan-in and fan-out at once.</summary>
    public const int DefaultPublishers = 2;

    public const int DefaultSubscribers = 4;

    /// <summary>Long enough for the JIT and pools to settle before anything is measured; short soaks stay short.</summary>
    public TimeSpan Warmup => WarmupOverride ?? TimeSpan.FromSeconds(Math.Clamp(Duration.TotalSeconds / 10, 5, 60));

    public static SoakOptions Parse(IReadOnlyList<string> args)
    {
        TimeSpan? duration = null;
        var transports = new List<string>();
        bool parallel = false;
        int payload = 1024;
        string? json = null;
        string? daemon = null;
        TimeSpan? warmup = null;
        double? rate = null;
        WaitStrategy? wait = null;
        (int publishers, int subscribers) = (DefaultPublishers, DefaultSubscribers);
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            string Value() => i + 1 < args.Count ? args[++i] : throw new ArgumentException($"{arg}: needs a value");
            switch (arg)
            {
                case "--transports":
                    transports.AddRange(Value().Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
                    break;
                case "--parallel":
                    parallel = true;
                    break;
                case "--payload":
                    string text = Value();
                    if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out payload) || payload is < 0 or > 64 * 1024 * 1024)
                    {
                        throw new ArgumentException($"--payload: '{text}' is not a byte count from 0 to 67108864");
                    }

                    break;
                case "--json":
                    json = Value();
                    break;
                case "--warmup":
                    warmup = ParseDuration(Value());
                    break;
                case "--rate":
                    // Only a number here: its range is the daemon's rule (rate_per_publisher), refused by name when out of it.
                    string rateText = Value();
                    rate = double.TryParse(rateText, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out double perSecond)
                        ? perSecond
                        : throw new ArgumentException($"--rate: '{rateText}' is not messages a second per publisher (e.g. 2000)");
                    break;
                case "--wait":
                    string waitText = Value();
                    wait = waitText.ToLowerInvariant() switch
                    {
                        "spin" => WaitStrategy.Spin,
                        "yield" => WaitStrategy.Yield,
                        "block" => WaitStrategy.Block,
                        _ => throw new ArgumentException($"--wait: '{waitText}' is not spin, yield or block"),
                    };
                    break;
                case "--topology":
                    // Only the form here: how many publishers and subscribers a scenario may have is the daemon's rule.
                    string topology = Value();
                    string[] sides = topology.Split(':');
                    if (sides.Length != 2 || !int.TryParse(sides[0], NumberStyles.None, CultureInfo.InvariantCulture, out publishers)
                        || !int.TryParse(sides[1], NumberStyles.None, CultureInfo.InvariantCulture, out subscribers))
                    {
                        throw new ArgumentException($"--topology: '{topology}' is not PUBLISHERS:SUBSCRIBERS (e.g. 2:4)");
                    }

                    break;
                case "--daemon":
                    daemon = Value();
                    break;
                default:
                    if (arg.StartsWith('-') || duration is not null)
                    {
                        throw new ArgumentException($"unexpected argument '{arg}'");
                    }

                    duration = ParseDuration(arg);
                    break;
            }
        }

        return new SoakOptions(
            duration ?? throw new ArgumentException("DURATION: is required, e.g. 90s, 5m or 1h"),
            transports,
            parallel,
            payload,
            json,
            daemon ?? DefaultDaemonPath(),
            warmup,
            rate,
            wait,
            publishers,
            subscribers);
    }

    /// <summary>"90s", "5m", "1h", "1500ms" or plain seconds; from 5 s (anything shorter has no first and last tenth worth comparing) to 7 days.</summary>
    public static TimeSpan ParseDuration(string text)
    {
        (string number, double unitSeconds) = text switch
        {
            _ when text.EndsWith("ms", StringComparison.Ordinal) => (text[..^2], 0.001),
            _ when text.EndsWith('s') => (text[..^1], 1),
            _ when text.EndsWith('m') => (text[..^1], 60),
            _ when text.EndsWith('h') => (text[..^1], 3600),
            _ => (text, 1),
        };
        if (!double.TryParse(number, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out double value)
            || value * unitSeconds is not (>= 5 and <= 7 * 24 * 3600))
        {
            throw new ArgumentException($"DURATION: '{text}' is not a duration from 5s to 168h (e.g. 90s, 5m, 1h)");
        }

        return TimeSpan.FromSeconds(value * unitSeconds);
    }

    /// <summary>The daemon built beside this tool's own configuration: bench/Soak/bin/C/tfm → src/BenchDaemon/bin/C/tfm.</summary>
    private static string DefaultDaemonPath()
    {
        var tfm = new DirectoryInfo(AppContext.BaseDirectory);
        var configuration = tfm.Parent!;
        for (var directory = configuration.Parent; directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "IpcBench.sln")))
            {
                return Path.Combine(directory.FullName, "src", "BenchDaemon", "bin", configuration.Name, tfm.Name, "BenchDaemon");
            }
        }

        throw new ArgumentException("--daemon: not given, and IpcBench.sln is not above this tool to find the daemon beside it");
    }
}
