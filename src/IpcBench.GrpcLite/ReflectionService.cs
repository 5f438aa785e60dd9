using Google.Protobuf;
using ReflectionV1 = IpcBench.GrpcLite.Reflection.V1;
using ReflectionV1Alpha = IpcBench.GrpcLite.Reflection.V1Alpha;

namespace IpcBench.GrpcLite;

/// <summary>Answers server reflection requests from the descriptors of the mapped services.</summary>
internal sealed class ReflectionService(GrpcLiteServiceRegistry registry)
{
    public async Task RunV1Async(
        IAsyncEnumerable<ReflectionV1.ServerReflectionRequest> requests,
        IServerStreamWriter<ReflectionV1.ServerReflectionResponse> responses,
        GrpcCallContext context)
    {
        await foreach (var request in requests.WithCancellation(context.CancellationToken))
        {
            await responses.WriteAsync(Answer(request, context.Listener), context.CancellationToken);
        }
    }

    /// <summary>v1alpha is wire-identical to v1, so requests are re-read as v1 and answered by the same code.</summary>
    public async Task RunV1AlphaAsync(
        IAsyncEnumerable<ReflectionV1Alpha.ServerReflectionRequest> requests,
        IServerStreamWriter<ReflectionV1Alpha.ServerReflectionResponse> responses,
        GrpcCallContext context)
    {
        await foreach (var request in requests.WithCancellation(context.CancellationToken))
        {
            var answer = Answer(ReflectionV1.ServerReflectionRequest.Parser.ParseFrom(request.ToByteString()), context.Listener);
            await responses.WriteAsync(ReflectionV1Alpha.ServerReflectionResponse.Parser.ParseFrom(answer.ToByteString()), context.CancellationToken);
        }
    }

    /// <param name="listener">The listener asking: only the services it serves are listed.</param>
    internal ReflectionV1.ServerReflectionResponse Answer(ReflectionV1.ServerReflectionRequest request, string? listener)
    {
        var index = registry.Index;
        var response = new ReflectionV1.ServerReflectionResponse { ValidHost = request.Host, OriginalRequest = request };
        switch (request.MessageRequestCase)
        {
            case ReflectionV1.ServerReflectionRequest.MessageRequestOneofCase.ListServices:
                var list = new ReflectionV1.ListServiceResponse();
                // Only the list is filtered: descriptors of other services are no secret (the .proto files are public),
                // and looking symbols up by name still works wherever reflection is served.
                foreach (var name in index.ServiceNames.Where(n => registry.IsServedOn(n, listener)))
                {
                    list.Service.Add(new ReflectionV1.ServiceResponse { Name = name });
                }

                response.ListServicesResponse = list;
                break;

            case ReflectionV1.ServerReflectionRequest.MessageRequestOneofCase.FileByFilename:
                SetFileOrError(response, index.FindFileByName(request.FileByFilename), $"File not found: {request.FileByFilename}");
                break;

            case ReflectionV1.ServerReflectionRequest.MessageRequestOneofCase.FileContainingSymbol:
                SetFileOrError(response, index.FindFileContainingSymbol(request.FileContainingSymbol), $"Symbol not found: {request.FileContainingSymbol}");
                break;

            case ReflectionV1.ServerReflectionRequest.MessageRequestOneofCase.FileContainingExtension:
                var extension = request.FileContainingExtension;
                SetError(response, StatusCode.NotFound, $"Extension not found: {extension.ContainingType}({extension.ExtensionNumber}); this server defines no extensions.");
                break;

            case ReflectionV1.ServerReflectionRequest.MessageRequestOneofCase.AllExtensionNumbersOfType:
                var type = request.AllExtensionNumbersOfType;
                if (index.IsMessageType(type))
                {
                    response.AllExtensionNumbersResponse = new ReflectionV1.ExtensionNumberResponse { BaseTypeName = type };
                }
                else
                {
                    SetError(response, StatusCode.NotFound, $"Type not found: {type}");
                }

                break;

            default:
                SetError(response, StatusCode.InvalidArgument, "The reflection request names no operation.");
                break;
        }

        return response;
    }

    private static void SetFileOrError(ReflectionV1.ServerReflectionResponse response, Google.Protobuf.Reflection.FileDescriptor? file, string notFound)
    {
        if (file is null)
        {
            SetError(response, StatusCode.NotFound, notFound);
            return;
        }

        // Clients build descriptors from these bytes, so the requested file comes first and every dependency follows;
        // resending ones the client may already hold is allowed and keeps the server stateless.
        var files = new ReflectionV1.FileDescriptorResponse();
        foreach (var f in DescriptorIndex.WithDependencies(file))
        {
            files.FileDescriptorProto.Add(f.SerializedData);
        }

        response.FileDescriptorResponse = files;
    }

    private static void SetError(ReflectionV1.ServerReflectionResponse response, StatusCode code, string message) =>
        response.ErrorResponse = new ReflectionV1.ErrorResponse { ErrorCode = (int)code, ErrorMessage = message };
}
