using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace IpcBench.GrpcLite;

/// <summary>Settings of <see cref="BearerTokenFilter"/>; see <see cref="GrpcLiteServiceCollectionExtensions.AddGrpcLiteBearerToken"/>.</summary>
public sealed class GrpcLiteBearerTokenOptions
{
    /// <summary>Off: every call passes. Lets a host decide at run time, from its own configuration, whether tokens apply.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>The secret clients send as <c>authorization: Bearer &lt;token&gt;</c>. Required when enabled.</summary>
    public string? Token { get; set; }

    /// <summary>
    /// Services callable without a token. Health by default: load balancers, orchestrators and readiness probes check
    /// it without credentials, and it reveals nothing but "serving".
    /// </summary>
    public ISet<string> ExemptServices { get; } = new HashSet<string>(StringComparer.Ordinal) { "grpc.health.v1.Health" };

    /// <summary>Listener names the token is required on (<see cref="GrpcLiteListenOptions.Name"/>); empty: every listener.</summary>
    public ISet<string> Listeners { get; } = new HashSet<string>(StringComparer.Ordinal);

    /// <summary>The realm named in the <c>www-authenticate</c> hint sent with UNAUTHENTICATED.</summary>
    public string Realm { get; set; } = "grpc";
}

/// <summary>
/// Requires <c>authorization: Bearer &lt;token&gt;</c> on every call except those to exempt services. A missing,
/// malformed or wrong token all get the same UNAUTHENTICATED answer, so a caller learns nothing about which it was.
/// </summary>
public sealed partial class BearerTokenFilter : IGrpcLiteCallFilter
{
    private const string Scheme = "Bearer";

    private readonly GrpcLiteBearerTokenOptions _options;
    private readonly byte[] _expectedDigest;
    private readonly string _challenge;
    private readonly string _refusal;
    private readonly ILogger<BearerTokenFilter> _logger;

    public BearerTokenFilter(IOptions<GrpcLiteBearerTokenOptions> options, ILogger<BearerTokenFilter> logger)
    {
        _options = options.Value;
        _logger = logger;
        if (_options.Enabled && string.IsNullOrEmpty(_options.Token))
        {
            throw new OptionsValidationException(nameof(GrpcLiteBearerTokenOptions), typeof(GrpcLiteBearerTokenOptions),
                ["Bearer tokens are enabled but no token is configured."]);
        }

        // Comparing digests rather than the tokens themselves keeps the comparison's duration independent of the
        // presented token's length as well as its content.
        _expectedDigest = SHA256.HashData(Encoding.UTF8.GetBytes(_options.Token ?? ""));
        _challenge = $"{Scheme} realm=\"{_options.Realm}\"";
        _refusal = $"This server requires a bearer token: send the metadata 'authorization: {Scheme} <token>' "
            + "(grpcurl -H 'authorization: Bearer <token>'). The token was missing or not accepted.";
    }

    public ValueTask OnCallAsync(GrpcCallContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (!_options.Enabled || _options.ExemptServices.Contains(context.Service)
            || (_options.Listeners.Count > 0 && (context.Listener is not { } listener || !_options.Listeners.Contains(listener))))
        {
            return ValueTask.CompletedTask;
        }

        if (Accepts(context.GetHeader("authorization")))
        {
            return ValueTask.CompletedTask;
        }

        LogRefused(_logger, context.Method, context.Peer);
        context.HttpContext.Response.Headers.WWWAuthenticate = _challenge;
        throw new RpcException(StatusCode.Unauthenticated, _refusal);
    }

    private bool Accepts(string? authorization)
    {
        // The scheme is case-insensitive (RFC 9110); the token is compared as sent, without surrounding blanks.
        var presented = authorization is not null && authorization.Length > Scheme.Length
            && authorization.StartsWith(Scheme, StringComparison.OrdinalIgnoreCase) && authorization[Scheme.Length] == ' '
            ? authorization.AsSpan(Scheme.Length + 1).Trim()
            : [];
        Span<byte> digest = stackalloc byte[SHA256.HashSizeInBytes];
        var bytes = Encoding.UTF8.GetBytes(presented.ToString());
        SHA256.HashData(bytes, digest);

        // An absent token is hashed and compared too, so every refusal takes the same path and the same time.
        return CryptographicOperations.FixedTimeEquals(digest, _expectedDigest) & !presented.IsEmpty;
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Refused {Method} from {Peer}: no valid bearer token")]
    private static partial void LogRefused(ILogger logger, string method, string peer);
}
