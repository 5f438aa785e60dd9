using ServiceDescriptor = Google.Protobuf.Reflection.ServiceDescriptor;
using IpcBench.GrpcLite.Health.V1;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
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
}

public static class GrpcLiteEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the registered methods of <paramref name="service"/> at <c>/{package.Service}/{Method}</c> and lists the
    /// service in reflection. Methods of the service that are not registered answer UNIMPLEMENTED.
    /// </summary>
    public static IEndpointConventionBuilder MapGrpcLiteService(
        this IEndpointRouteBuilder endpoints,
        ServiceDescriptor service,
        Action<GrpcLiteServiceBuilder> configure)
    {
        ArgumentNullException.ThrowIfNull(service);
        ArgumentNullException.ThrowIfNull(configure);
        var server = GetServer(endpoints);
        var builder = new GrpcLiteServiceBuilder(service);
        configure(builder);
        server.Registry.Add(service);

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

    /// <summary>Maps grpc.reflection.v1 and v1alpha ServerReflection, which is how grpcurl works without .proto files.</summary>
    public static IEndpointConventionBuilder MapGrpcLiteReflection(this IEndpointRouteBuilder endpoints)
    {
        var reflection = endpoints.ServiceProvider.GetRequiredService<ReflectionService>();
        var v1 = endpoints.MapGrpcLiteService(ReflectionV1.ReflectionReflection.Descriptor.Services[0], s => s
            .DuplexStreaming<ReflectionV1.ServerReflectionRequest, ReflectionV1.ServerReflectionResponse>("ServerReflectionInfo", reflection.RunV1Async));
        var v1Alpha = endpoints.MapGrpcLiteService(ReflectionV1Alpha.ReflectionReflection.Descriptor.Services[0], s => s
            .DuplexStreaming<ReflectionV1Alpha.ServerReflectionRequest, ReflectionV1Alpha.ServerReflectionResponse>("ServerReflectionInfo", reflection.RunV1AlphaAsync));
        return new CompositeEndpointConventionBuilder([v1, v1Alpha]);
    }

    /// <summary>
    /// Maps grpc.health.v1.Health. Statuses come from <see cref="GrpcLiteHealthService"/>; everything turns NOT_SERVING
    /// when the host starts stopping.
    /// </summary>
    public static IEndpointConventionBuilder MapGrpcLiteHealth(this IEndpointRouteBuilder endpoints)
    {
        var health = endpoints.ServiceProvider.GetRequiredService<GrpcLiteHealthService>();
        endpoints.ServiceProvider.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(health.SetAllNotServing);
        return endpoints.MapGrpcLiteService(HealthReflection.Descriptor.Services[0], s => s
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
