using IpcBench.GrpcLite.Health.V1;
using IpcBench.GrpcLite.Tests.V1;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;

namespace IpcBench.GrpcLite.Tests;

/// <summary>Mistakes in mapping a service fail at startup with a message that says what to fix.</summary>
public sealed class RegistrationTests
{
    private static readonly Google.Protobuf.Reflection.ServiceDescriptor TestService = TestReflection.Descriptor.Services[0];

    [Fact]
    public async Task UnknownMethod_Throws()
    {
        await using var app = BuildApp();

        var ex = Assert.Throws<ArgumentException>(() => app.MapGrpcLiteService(TestService, s => s
            .Unary<EchoRequest, EchoResponse>("Ecko", (r, _) => Task.FromResult(new EchoResponse()))));

        Assert.Contains("no method 'Ecko'", ex.Message);
        Assert.Contains("Echo, Count", ex.Message);
    }

    [Fact]
    public async Task WrongRequestType_Throws()
    {
        await using var app = BuildApp();

        var ex = Assert.Throws<ArgumentException>(() => app.MapGrpcLiteService(TestService, s => s
            .Unary<ValidateRequest, EchoResponse>("Echo", (r, _) => Task.FromResult(new EchoResponse()))));

        Assert.Contains("request type grpclite.test.v1.EchoRequest", ex.Message);
    }

    [Fact]
    public async Task WrongResponseType_Throws()
    {
        await using var app = BuildApp();

        var ex = Assert.Throws<ArgumentException>(() => app.MapGrpcLiteService(TestService, s => s
            .Unary<EchoRequest, HealthCheckResponse>("Echo", (r, _) => Task.FromResult(new HealthCheckResponse()))));

        Assert.Contains("response type grpclite.test.v1.EchoResponse", ex.Message);
    }

    [Fact]
    public async Task WrongStreamingKind_Throws()
    {
        await using var app = BuildApp();

        var ex = Assert.Throws<ArgumentException>(() => app.MapGrpcLiteService(TestService, s => s
            .Unary<CountRequest, CountResponse>("Count", (r, _) => Task.FromResult(new CountResponse()))));

        Assert.Contains("server-streaming", ex.Message);
        Assert.Contains("ServerStreaming", ex.Message);
    }

    [Fact]
    public async Task SameServiceTwice_Throws()
    {
        await using var app = BuildApp();
        app.MapGrpcLiteHealth();

        Assert.Throws<InvalidOperationException>(() => app.MapGrpcLiteHealth());
    }

    [Fact]
    public async Task WithoutAddGrpcLite_Throws()
    {
        await using var app = WebApplication.CreateSlimBuilder().Build();

        var ex = Assert.Throws<InvalidOperationException>(() => app.MapGrpcLiteService(TestService, _ => { }));

        Assert.Contains("AddGrpcLite", ex.Message);
    }

    private static WebApplication BuildApp()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Services.AddGrpcLite();
        return builder.Build();
    }
}
