using ProtoServiceDescriptor = Google.Protobuf.Reflection.ServiceDescriptor;
using IpcBench.GrpcLite.Health.V1;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using ReflectionV1 = IpcBench.GrpcLite.Reflection.V1;
using ReflectionV1Alpha = IpcBench.GrpcLite.Reflection.V1Alpha;

namespace IpcBench.GrpcLite;

public static class GrpcLiteServiceCollectionExtensions
{
    /// <summary>Registers the gRPC runtime plus the reflection and health services that the Map methods expose.</summary>
    public static IServiceCollection AddGrpcLite(this IServiceCollection services, Action<GrpcLiteServerOptions>? configure = null)
    {
        services.AddRouting();
        services.AddOptions<GrpcLiteServerOptions>();
        if (configure is not null)
        {
            services.Configure(configure);
        }

        services.TryAddSingleton<GrpcLiteServer>();
        services.TryAddSingleton<GrpcLiteHealthService>();
        services.TryAddSingleton(sp => new ReflectionService(sp.GetRequiredService<GrpcLiteServer>().Registry));
        return services;
    }

    /// <summary>
    /// Requires <c>authorization: Bearer &lt;token&gt;</c> on every call but health (see <see cref="GrpcLiteBearerTokenOptions"/>);
    /// calls without a valid token end UNAUTHENTICATED with a <c>www-authenticate</c> hint. Reflection is covered too:
    /// the API's shape is nobody's business without the token, and grpcurl's <c>-H</c> sends it on reflection calls as well.
    /// </summary>
    public static OptionsBuilder<GrpcLiteBearerTokenOptions> AddGrpcLiteBearerToken(this IServiceCollection services, Action<GrpcLiteBearerTokenOptions>? configure = null)
    {
        var options = services.AddOptions<GrpcLiteBearerTokenOptions>();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        services.TryAddEnumerable(ServiceDescriptor.Singleton<IGrpcLiteCallFilter, BearerTokenFilter>());
        return options;
    }
}

public static class GrpcLiteEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the registered methods of <paramref name="service"/> at <c>/{package.Service}/{Method}</c> and lists the
    /// service in reflection. Methods of the service that are not registered answer UNIMPLEMENTED.
    /// </summary>
    public static IEndpointConventionBuilder MapGrpcLiteService(
        this IEndpointRouteBuilder endpoints,
        ProtoServiceDescriptor service,
        Action<GrpcLiteServiceBuilder> configure)
    {
        ArgumentNullException.ThrowIfNull(service);
        ArgumentNullException.ThrowIfNull(configure);
        var server = GetServer(endpoints);
        var builder = new GrpcLiteServiceBuilder(service);
        configure(builder);
        server.Registry.Add(service, builder.Listeners);

        var conventions = new List<IEndpointConventionBuilder>(builder.Methods.Count);
        foreach (var registration in builder.Methods)
        {
            var path = $"/{service.FullName}/{registration.Method.Name}";
            var invoke = registration.Invoke;
            conventions.Add(endpoints
                .MapPost(path, httpContext => server.HandleAsync(httpContext, path, invoke))
                .WithDisplayName($"gRPC {path}"));
        }

        MapUnimplemented(endpoints, server);
        return new CompositeEndpointConventionBuilder(conventions);
    }

    /// <summary>
    /// Maps grpc.reflection.v1 and v1alpha ServerReflection, which is how grpcurl works without .proto files. A listener
    /// lists only the services it serves. <paramref name="listeners"/>: serve reflection only there (default: everywhere).
    /// </summary>
    public static IEndpointConventionBuilder MapGrpcLiteReflection(this IEndpointRouteBuilder endpoints, params string[] listeners)
    {
        var reflection = endpoints.ServiceProvider.GetRequiredService<ReflectionService>();
        var v1 = endpoints.MapGrpcLiteService(ReflectionV1.ReflectionReflection.Descriptor.Services[0], s => s
            .OnlyOnListeners(listeners)
            .DuplexStreaming<ReflectionV1.ServerReflectionRequest, ReflectionV1.ServerReflectionResponse>("ServerReflectionInfo", reflection.RunV1Async));
        var v1Alpha = endpoints.MapGrpcLiteService(ReflectionV1Alpha.ReflectionReflection.Descriptor.Services[0], s => s
            .OnlyOnListeners(listeners)
            .DuplexStreaming<ReflectionV1Alpha.ServerReflectionRequest, ReflectionV1Alpha.ServerReflectionResponse>("ServerReflectionInfo", reflection.RunV1AlphaAsync));
        return new CompositeEndpointConventionBuilder([v1, v1Alpha]);
    }

    /// <summary>
    /// Maps grpc.health.v1.Health. Statuses come from <see cref="GrpcLiteHealthService"/>; everything turns NOT_SERVING
    /// when the host starts stopping. <paramref name="listeners"/>: serve health only there (default: everywhere).
    /// </summary>
    public static IEndpointConventionBuilder MapGrpcLiteHealth(this IEndpointRouteBuilder endpoints, params string[] listeners)
    {
        var health = endpoints.ServiceProvider.GetRequiredService<GrpcLiteHealthService>();
        endpoints.ServiceProvider.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(health.SetAllNotServing);
        return endpoints.MapGrpcLiteService(HealthReflection.Descriptor.Services[0], s => s
            .OnlyOnListeners(listeners)
            .Unary<HealthCheckRequest, HealthCheckResponse>("Check", health.CheckAsync)
            .ServerStreaming<HealthCheckRequest, HealthCheckResponse>("Watch", health.WatchAsync));
    }

    private static GrpcLiteServer GetServer(IEndpointRouteBuilder endpoints) =>
        endpoints.ServiceProvider.GetService<GrpcLiteServer>()
        ?? throw new InvalidOperationException("gRPC services need services.AddGrpcLite() before they are mapped.");

    private static void MapUnimplemented(IEndpointRouteBuilder endpoints, GrpcLiteServer server)
    {
        if (server.UnimplementedRouteMapped)
        {
            return;
        }

        server.UnimplementedRouteMapped = true;
        endpoints
            .MapPost("/{service}/{method}", server.HandleUnimplementedAsync)
            .WithDisplayName("gRPC unimplemented")
            // Last resort: any real route, gRPC or not, wins over this one.
            .Add(b => ((RouteEndpointBuilder)b).Order = int.MaxValue);
    }

    private sealed class CompositeEndpointConventionBuilder(IReadOnlyList<IEndpointConventionBuilder> builders) : IEndpointConventionBuilder
    {
        public void Add(Action<EndpointBuilder> convention)
        {
            foreach (var builder in builders)
            {
                builder.Add(convention);
            }
        }

        public void Finally(Action<EndpointBuilder> finallyConvention)
        {
            foreach (var builder in builders)
            {
                builder.Finally(finallyConvention);
            }
        }
    }
}
