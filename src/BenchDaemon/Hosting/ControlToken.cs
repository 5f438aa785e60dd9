namespace IpcBench.Daemon.Hosting;

/// <summary>
/// The bearer token's rules, for the daemon's own token and for the one `run --token-file` sends: one set, so a client
/// refuses at once a token no daemon would hold. A refusal is a reason; the caller puts the option or source in front.
/// </summary>
public static class ControlToken
{
    /// <summary>Shorter tokens are guessable; 16 random characters are well beyond any online guessing.</summary>
    public const int MinimumLength = 16;

    /// <summary>The token in <paramref name="path"/>, surrounding whitespace dropped, checked as <see cref="Check"/>.</summary>
    /// <exception cref="ControlTokenException">The file is missing, others may read it, or what it holds is no token.</exception>
    public static string ReadFile(string path)
    {
        if (!File.Exists(path))
        {
            throw new ControlTokenException("does not exist");
        }

        // Like ssh with private keys: a secret others can read is no secret, and saying so beats silently trusting it.
        var mode = File.GetUnixFileMode(path);
        const UnixFileMode groupOrOther = UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.GroupExecute
            | UnixFileMode.OtherRead | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute;
        if ((mode & groupOrOther) != 0)
        {
            throw new ControlTokenException($"is accessible by group or others (mode {Convert.ToString((int)mode, 8)}); chmod 600 it") { OthersMayRead = true };
        }

        string text;
        try
        {
            text = File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new ControlTokenException($"cannot be read: {e.Message}", e);
        }

        return Check(text);
    }

    /// <summary>The token without surrounding whitespace.</summary>
    /// <exception cref="ControlTokenException">It is shorter than <see cref="MinimumLength"/> or holds more than printable ASCII.</exception>
    public static string Check(string text)
    {
        var token = text.Trim();
        const string what = "must hold one token of printable ASCII without blanks";
        if (token.Length < MinimumLength)
        {
            throw new ControlTokenException($"{what}; it has {token.Length} characters: use at least {MinimumLength} (e.g. openssl rand -hex 32)");
        }

        // It travels in an HTTP header and is typed into grpcurl's -H.
        return token.Any(c => c is < '!' or > '~')
            ? throw new ControlTokenException($"{what}; it has other characters (e.g. openssl rand -hex 32 makes one)")
            : token;
    }
}

/// <summary>Why a token or its file is refused, as a reason to follow the option or source that gave it.</summary>
public sealed class ControlTokenException : Exception
{
    public ControlTokenException(string reason, Exception? inner = null)
        : base(reason, inner)
    {
    }

    /// <summary>The file's mode lets group or others read it: the daemon adds how to mount a secret so.</summary>
    public bool OthersMayRead { get; init; }
}
