using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using IpcBench.Contracts;
using IpcBench.Daemon.Core;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Hosting;

/// <summary>
/// Who may use the control plane: the bearer token (required on any address but loopback, or when asked for) and the
/// TLS certificate, both loaded once at start-up. Every problem stops the daemon naming the option to fix.
/// </summary>
public sealed partial class ControlPlaneSecurity : IDisposable
{
    /// <summary>The environment variable that may hold the token instead of <see cref="DaemonOptions.ControlTokenFile"/>.</summary>
    public const string TokenVariable = "IPCBENCH_CONTROL_TOKEN";

    /// <summary>The listener name of the control port, which the token and the control services are scoped to.</summary>
    public const string ControlListener = "control";

    /// <summary>The listener name of the agents' Unix socket.</summary>
    public const string AgentListener = "agent";

    private const string Section = DaemonOptions.SectionName + ":";

    public ControlPlaneSecurity(IOptions<DaemonOptions> options, ILogger<ControlPlaneSecurity> logger)
        : this(options.Value, Environment.GetEnvironmentVariable(TokenVariable), logger)
    {
    }

    internal ControlPlaneSecurity(DaemonOptions options, string? tokenVariable, ILogger logger)
    {
        var hasControlPort = !string.IsNullOrWhiteSpace(options.ControlAddress);
        Token = hasControlPort ? LoadToken(options, tokenVariable) : null;
        TokenRequired = hasControlPort && (options.RequireControlToken || !IsLocalOnly(options.ControlAddress));
        if (Token is not null && !TokenRequired && hasControlPort)
        {
            LogTokenNotEnforced(logger, options.ControlAddress);
        }

        if (hasControlPort && !string.IsNullOrEmpty(options.TlsCertificateFile))
        {
            Certificate = LoadCertificate(options.TlsCertificateFile, options.TlsKeyFile!, logger);
        }
    }

    /// <summary>The bearer token, or null when none is configured.</summary>
    public string? Token { get; }

    /// <summary>Whether control calls (all but health) must carry the token.</summary>
    public bool TokenRequired { get; }

    /// <summary>The control port's TLS certificate with its key; null: plain-text h2c.</summary>
    public X509Certificate2? Certificate { get; }

    /// <summary>Whether only this machine can reach <paramref name="address"/> (<see cref="DaemonAddress.IsLocalOnly"/>); false when it is none.</summary>
    public static bool IsLocalOnly(string address) => DaemonAddress.Parse(address) is { IsLocalOnly: true };

    public void Dispose() => Certificate?.Dispose();

    private static string? LoadToken(DaemonOptions options, string? tokenVariable)
    {
        var file = options.ControlTokenFile;
        if (!string.IsNullOrWhiteSpace(file) && !string.IsNullOrEmpty(tokenVariable))
        {
            throw Invalid($"Both {Section}{nameof(DaemonOptions.ControlTokenFile)} and the environment variable {TokenVariable} are set; set one of them.");
        }

        bool fromFile = !string.IsNullOrWhiteSpace(file);
        if (!fromFile && string.IsNullOrEmpty(tokenVariable))
        {
            return null;
        }

        var source = fromFile ? $"{Section}{nameof(DaemonOptions.ControlTokenFile)} '{file}'" : $"The environment variable {TokenVariable}";
        try
        {
            return fromFile ? ControlToken.ReadFile(file!) : ControlToken.Check(tokenVariable!);
        }
        catch (ControlTokenException e)
        {
            var sentence = e.Message.EndsWith('.') ? e.Message : e.Message + ".";
            throw Invalid($"{source} {sentence}" + (e.OthersMayRead ? " Container secrets can be mounted with mode 0400." : string.Empty));
        }
    }

    private static X509Certificate2 LoadCertificate(string certificateFile, string keyFile, ILogger logger)
    {
        var names = $"{Section}{nameof(DaemonOptions.TlsCertificateFile)} '{certificateFile}' and {Section}{nameof(DaemonOptions.TlsKeyFile)} '{keyFile}'";
        foreach (var (option, path) in new[] { (nameof(DaemonOptions.TlsCertificateFile), certificateFile), (nameof(DaemonOptions.TlsKeyFile), keyFile) })
        {
            if (!File.Exists(path))
            {
                throw Invalid($"{Section}{option} '{path}' does not exist.");
            }
        }

        X509Certificate2 certificate;
        try
        {
            certificate = X509Certificate2.CreateFromPemFile(certificateFile, keyFile);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException or IOException or UnauthorizedAccessException)
        {
            throw Invalid($"{names} do not hold a PEM certificate and its unencrypted private key: {e.Message}");
        }

        if (!certificate.HasPrivateKey)
        {
            certificate.Dispose();
            throw Invalid($"{names}: the key does not belong to the certificate.");
        }

        var now = DateTime.Now;
        if (now < certificate.NotBefore || now > certificate.NotAfter)
        {
            LogCertificateNotValidNow(logger, certificate.Subject, certificate.NotBefore, certificate.NotAfter);
        }

        return certificate;
    }

    private static OptionsValidationException Invalid(string message) =>
        new(DaemonOptions.SectionName, typeof(DaemonOptions), [message]);

    [LoggerMessage(Level = LogLevel.Warning, Message = "A control token is configured but not required on the loopback address {Address}; set IpcBench:RequireControlToken=true to require it")]
    private static partial void LogTokenNotEnforced(ILogger logger, string address);

    [LoggerMessage(Level = LogLevel.Warning, Message = "The TLS certificate {Subject} is valid from {NotBefore} to {NotAfter}, not now: clients will refuse it")]
    private static partial void LogCertificateNotValidNow(ILogger logger, string subject, DateTime notBefore, DateTime notAfter);
}

/// <summary>The control plane's settings that can be checked without touching files: which combinations make sense.</summary>
public sealed class ControlPlaneOptionsValidator : IValidateOptions<DaemonOptions>
{
    private readonly Func<string?> _tokenVariable;

    public ControlPlaneOptionsValidator()
        : this(() => Environment.GetEnvironmentVariable(ControlPlaneSecurity.TokenVariable))
    {
    }

    internal ControlPlaneOptionsValidator(Func<string?> tokenVariable) => _tokenVariable = tokenVariable;

    public ValidateOptionsResult Validate(string? name, DaemonOptions options)
    {
        const string section = DaemonOptions.SectionName + ":";
        var failures = new List<string>();
        if (string.IsNullOrEmpty(options.TlsCertificateFile) != string.IsNullOrEmpty(options.TlsKeyFile))
        {
            failures.Add($"{section}{nameof(DaemonOptions.TlsCertificateFile)} and {section}{nameof(DaemonOptions.TlsKeyFile)} go together: set both for TLS, or neither.");
        }

        var address = options.ControlAddress;
        var hasToken = !string.IsNullOrWhiteSpace(options.ControlTokenFile) || !string.IsNullOrEmpty(_tokenVariable());
        if (!string.IsNullOrWhiteSpace(address) && !hasToken)
        {
            if (!ControlPlaneSecurity.IsLocalOnly(address))
            {
                failures.Add($"{section}{nameof(DaemonOptions.ControlAddress)} '{address}' is reachable from other machines, so the control plane needs a bearer token: "
                    + $"set {section}{nameof(DaemonOptions.ControlTokenFile)} (a file only the daemon's user can read) or the environment variable {ControlPlaneSecurity.TokenVariable}, "
                    + "or listen on 127.0.0.1.");
            }
            else if (options.RequireControlToken)
            {
                failures.Add($"{section}{nameof(DaemonOptions.RequireControlToken)} is set but there is no token: set {section}{nameof(DaemonOptions.ControlTokenFile)} or the environment variable {ControlPlaneSecurity.TokenVariable}.");
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
