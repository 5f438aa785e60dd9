namespace IpcBench.Daemon.Cli;

/// <summary>
/// Settings given on the command line as <c>--Section:Key=value</c> (<c>--IpcBench:DatabasePath=…</c>,
/// <c>--Serilog:MinimumLevel:Default=Warning</c>): taken out before parsing and handed to the host's configuration,
/// so that everything else the parser does not know is an error instead of a setting nobody reads.
/// </summary>
internal static class ConfigurationArguments
{
    public static (string[] Settings, string[] Arguments) Split(IReadOnlyList<string> args)
    {
        var settings = new List<string>();
        var arguments = new List<string>();
        bool endOfOptions = false;
        foreach (var token in args)
        {
            endOfOptions |= token == "--";
            (!endOfOptions && IsSetting(token) ? settings : arguments).Add(token);
        }

        return ([.. settings], [.. arguments]);
    }

    /// <summary>
    /// The one form the docs use: a configuration path (a section, a colon, a key) and <c>=value</c> in the same
    /// token. <c>--IpcBench:Key value</c> is not taken, so a forgotten <c>=</c> is reported, not half applied.
    /// </summary>
    public static bool IsSetting(string token)
    {
        if (!token.StartsWith("--", StringComparison.Ordinal) || token.Length < 3 || !char.IsLetter(token[2]))
        {
            return false;
        }

        int equals = token.IndexOf('=', StringComparison.Ordinal);
        int colon = token.IndexOf(':', StringComparison.Ordinal);
        return colon > 2 && equals > colon + 1;
    }

    /// <summary>Whether an unknown option looks like a setting without its <c>=value</c>, to say so.</summary>
    public static bool LooksLikeSetting(string token) =>
        token.StartsWith("--", StringComparison.Ordinal) && token.IndexOf(':', StringComparison.Ordinal) > 2;
}
