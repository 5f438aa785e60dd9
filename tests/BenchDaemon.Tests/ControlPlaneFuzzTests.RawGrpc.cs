using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using Google.Protobuf;
using Google.Protobuf.Reflection;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Tests.Infrastructure;
using Microsoft.AspNetCore.TestHost;
using Grpc.Core;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>Raw gRPC calls of <see cref="ControlPlaneFuzzTests"/>: bytes framed by hand, statuses read from the trailers.</summary>
public sealed partial class ControlPlaneFuzzTests
{
    private static byte[] Frame(byte[] message)
    {
        var framed = new byte[5 + message.Length];
        BinaryPrimitives.WriteUInt32BigEndian(framed.AsSpan(1), (uint)message.Length);
        message.CopyTo(framed, 5);
        return framed;
    }

    /// <summary>The answer to one raw call: its status and messages, or what was wrong with the answer itself.</summary>
    private sealed record RawOutcome(StatusCode? Status, string? Message, IReadOnlyList<byte[]> Messages, string? Problem);

    /// <summary>
    /// gRPC over h2c from raw bytes, so requests can be anything at all; Grpc.Net.Client would only send well-formed ones.
    /// </summary>
    private sealed class RawGrpcClient(HttpClient http) : IDisposable
    {
        /// <summary>HTTP/2's CANCEL error code (RFC 9113, 7).</summary>
        private const int Http2Cancel = 8;

        private readonly HttpClient _http = http;

        public async Task<RawOutcome> CallAsync(string path, byte[] body, TimeSpan timeout, bool expectCancel)
        {
            using var request = new HttpRequestMessage(HttpMethod.Post, path)
            {
                Content = new ByteArrayContent(body),
                Version = HttpVersion.Version20,
                VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            };
            request.Content.Headers.ContentType = MediaTypeHeaderValue.Parse("application/grpc");
            request.Headers.TE.Add(new TransferCodingWithQualityHeaderValue("trailers"));
            using var cts = new CancellationTokenSource(timeout);
            try
            {
                using var response = await _http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cts.Token);
                if (expectCancel && cts.IsCancellationRequested)
                {
                    // Hung up on purpose before the answer came: over a real connection nothing follows a reset, but the
                    // in-process host still answers its handler's reaction to the hang-up (an aborted body read).
                    return new RawOutcome(null, null, [], null);
                }

                if (response.StatusCode != HttpStatusCode.OK)
                {
                    return Problem($"HTTP {(int)response.StatusCode} instead of a gRPC answer");
                }

                if (ReadStatus(response.Headers) is { } trailersOnly)
                {
                    return new RawOutcome(trailersOnly.Code, trailersOnly.Message, [], null);
                }

                var content = await response.Content.ReadAsByteArrayAsync(cts.Token);
                var messages = new List<byte[]>();
                for (int offset = 0; offset < content.Length;)
                {
                    if (content.Length - offset < 5)
                    {
                        return Problem("the response ends inside a message header");
                    }

                    var length = (int)BinaryPrimitives.ReadUInt32BigEndian(content.AsSpan(offset + 1));
                    if (content.Length - offset - 5 < length)
                    {
                        return Problem("the response ends inside a message");
                    }

                    messages.Add(content.AsSpan(offset + 5, length).ToArray());
                    offset += 5 + length;
                }

                return ReadStatus(response.TrailingHeaders) is { } status
                    ? new RawOutcome(status.Code, status.Message, messages, null)
                    : Problem("the response ended without grpc-status");
            }
            catch (OperationCanceledException) when (cts.IsCancellationRequested)
            {
                // The client hung up on purpose (a watch cut short): there is no status to judge. Otherwise the server hung.
                return expectCancel ? new RawOutcome(null, null, [], null) : Problem($"no answer within {timeout.TotalSeconds:0} s");
            }
            catch (HttpResetTestException e) when (expectCancel && cts.IsCancellationRequested && e.ErrorCode == Http2Cancel)
            {
                // The in-process host's side of the same hang-up: the handler saw the request aborted and reset the stream
                // (CANCEL) before SendAsync saw the token (2026-11-29, seed 1029817974). A real connection has no such race.
                return new RawOutcome(null, null, [], null);
            }
            catch (HttpRequestException e)
            {
                return Problem($"the connection failed: {e.Message}");
            }
        }

        public void Dispose() => _http.Dispose();

        private static RawOutcome Problem(string problem) => new(null, null, [], problem);

        private static (StatusCode Code, string? Message)? ReadStatus(HttpHeaders headers)
        {
            if (!headers.TryGetValues("grpc-status", out var values))
            {
                return null;
            }

            var message = headers.TryGetValues("grpc-message", out var m) ? Uri.UnescapeDataString(string.Join(",", m)) : null;
            return int.TryParse(values.First(), NumberStyles.None, CultureInfo.InvariantCulture, out var code)
                ? ((StatusCode)code, message)
                : (StatusCode.Unknown, $"grpc-status '{values.First()}'");
        }
    }
}
