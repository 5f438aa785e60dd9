using System.Net.Sockets;
using System.Security.Claims;
using System.Security.Cryptography;
using System.Text;
using System.Text.Encodings.Web;
using Grpc.Core;
using IpcBench.Daemon.Control;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authorization;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Hosting;

/// <summary>
/// The control token as ASP.NET Core authentication: <c>authorization: Bearer &lt;token&gt;</c> authenticates a caller.
/// A missing, malformed or wrong token all get the same UNAUTHENTICATED answer, so a caller learns nothing about which.
/// </summary>
public sealed partial class BearerTokenHandler(
    IOptionsMonitor<AuthenticationSchemeOptions> options,
    ILoggerFactory loggers,
    UrlEncoder encoder,
    ControlPlaneSecurity security)
    : AuthenticationHandler<AuthenticationSchemeOptions>(options, loggers, encoder)
{
    public const string SchemeName = "Bearer";

    private const string Challenge = SchemeName + " realm=\"ipcbench\"";

    private const string Refusal = "This server requires a bearer token: send the metadata 'authorization: Bearer <token>' "
        + "(grpcurl: export IPCBENCH_TOKEN, then -expand-headers -H 'authorization: Bearer ${IPCBENCH_TOKEN}'). The token was missing or not accepted.";

    protected override Task<AuthenticateResult> HandleAuthenticateAsync()
    {
        if (security.Token is not { } token || !Accepts(Request.Headers.Authorization.ToString(), token))
        {
            return Task.FromResult(AuthenticateResult.NoResult());
        }

        var principal = new ClaimsPrincipal(new ClaimsIdentity([new Claim(ClaimTypes.Name, "control-token")], SchemeName));
        return Task.FromResult(AuthenticateResult.Success(new AuthenticationTicket(principal, SchemeName)));
    }

    protected override Task HandleChallengeAsync(AuthenticationProperties properties)
    {
        LogRefused(Logger, Request.Path.Value ?? "", Peer(Context));
        Response.Headers.WWWAuthenticate = Challenge;
        return GrpcResponses.WriteStatusAsync(Context, StatusCode.Unauthenticated, Refusal);
    }

    private static bool Accepts(string authorization, string token)
    {
        // The scheme is case-insensitive (RFC 9110); the token is compared as sent, without surrounding blanks.
        var presented = authorization.Length > SchemeName.Length && authorization.StartsWith(SchemeName, StringComparison.OrdinalIgnoreCase)
            && authorization[SchemeName.Length] == ' '
            ? authorization.AsSpan(SchemeName.Length + 1).Trim()
            : [];

        // Digests, not the tokens, are compared: the comparison then takes as long whatever the presented token's length
        // and content. An absent token is hashed and compared too, so every refusal takes the same path.
        Span<byte> expected = stackalloc byte[SHA256.HashSizeInBytes];
        Span<byte> actual = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(Encoding.UTF8.GetBytes(token), expected);
        SHA256.HashData(Encoding.UTF8.GetBytes(presented.ToString()), actual);
        return CryptographicOperations.FixedTimeEquals(actual, expected) & !presented.IsEmpty;
    }

    /// <summary>gRPC's peer notation: ipv4:127.0.0.1:5000, ipv6:[::1]:5000, or unix: (a unix socket client has no address).</summary>
    private static string Peer(HttpContext context)
    {
        var connection = context.Connection;
        if (connection.RemoteIpAddress is not { } ip)
        {
            return "unix:";
        }

        ip = ip.IsIPv4MappedToIPv6 ? ip.MapToIPv4() : ip;
        return ip.AddressFamily == AddressFamily.InterNetworkV6 ? $"ipv6:[{ip}]:{connection.RemotePort}" : $"ipv4:{ip}:{connection.RemotePort}";
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Refused {Method} from {Peer}: no valid bearer token")]
    private static partial void LogRefused(ILogger logger, string method, string peer);
}

/// <summary>
/// The control plane's policy: on the control listener, when the token is required, only callers the token
/// authenticated. The agents' socket has its own per-agent tokens, and health is anonymous (AllowAnonymous).
/// </summary>
public sealed class ControlTokenRequirement : AuthorizationHandler<ControlTokenRequirement>, IAuthorizationRequirement
{
    public const string PolicyName = "ControlToken";

    protected override Task HandleRequirementAsync(AuthorizationHandlerContext context, ControlTokenRequirement requirement)
    {
        var http = context.Resource as HttpContext;
        var security = http?.RequestServices.GetRequiredService<ControlPlaneSecurity>();
        var onControlPort = http?.Features.Get<ListenerFeature>()?.Name == ControlPlaneSecurity.ControlListener;
        if (security is { TokenRequired: false } || (http is not null && !onControlPort)
            || context.User.Identities.Any(i => i.AuthenticationType == BearerTokenHandler.SchemeName))
        {
            context.Succeed(requirement);
        }

        return Task.CompletedTask;
    }
}

public static class BearerTokenAuthenticationExtensions
{
    /// <summary>
    /// The bearer scheme and the <see cref="ControlTokenRequirement.PolicyName"/> policy, which is also the fallback: every
    /// endpoint that names no policy of its own (BenchControl, reflection, the UNIMPLEMENTED answers for unknown methods)
    /// is covered, so a caller without the token learns nothing, not even which methods exist.
    /// </summary>
    public static IServiceCollection AddControlTokenAuthorization(this IServiceCollection services)
    {
        // AddAuthentication() less its AddDataProtection(): data protection is for handlers that encrypt what they hand
        // out (cookies, OAuth state); a bearer token is only compared. Registered, it created and stored a key ring at
        // every start, warning "No XML encryptor configured", for nothing the daemon ever protects.
        services.AddAuthenticationCore();
        services.AddWebEncoders();
        services.TryAddSingleton(TimeProvider.System);
        services.Configure<AuthenticationOptions>(authentication => authentication.DefaultScheme = BearerTokenHandler.SchemeName);
        new AuthenticationBuilder(services)
            .AddScheme<AuthenticationSchemeOptions, BearerTokenHandler>(BearerTokenHandler.SchemeName, configureOptions: null);
        var policy = new AuthorizationPolicyBuilder(BearerTokenHandler.SchemeName).AddRequirements(new ControlTokenRequirement()).Build();
        services.AddAuthorizationBuilder()
            .AddPolicy(ControlTokenRequirement.PolicyName, policy)
            .SetFallbackPolicy(policy);
        return services;
    }
}
