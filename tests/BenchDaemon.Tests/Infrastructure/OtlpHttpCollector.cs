using System.Net;
using System.Net.Sockets;
using System.Text;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>A stand-in OTLP/HTTP receiver on loopback: accepts every export (an empty protobuf response is a valid one) and keeps the bodies.</summary>
internal sealed class OtlpHttpCollector : IAsyncDisposable
{
    private readonly HttpListener _listener;
    private readonly Task _loop;
    private readonly List<(string Path, byte[] Body)> _received = [];

    private OtlpHttpCollector(HttpListener listener, string endpoint)
    {
        _listener = listener;
        Endpoint = endpoint;
        _loop = Task.Run(LoopAsync);
    }

    public string Endpoint { get; }

    public static OtlpHttpCollector Start()
    {
        for (int attempt = 1; ; attempt++)
        {
            var endpoint = $"http://127.0.0.1:{FreePort()}";
            var listener = new HttpListener();
            listener.Prefixes.Add(endpoint + "/");
            try
            {
                listener.Start();
                return new OtlpHttpCollector(listener, endpoint);
            }
            catch (HttpListenerException) when (attempt < 3)
            {
                listener.Close();
            }
        }
    }

    /// <summary>Every request body posted to <paramref name="path"/>, in arrival order.</summary>
    public IReadOnlyList<byte[]> Bodies(string path)
    {
        lock (_received)
        {
            return [.. _received.Where(r => r.Path == path).Select(r => r.Body)];
        }
    }

    /// <summary>Everything posted to <paramref name="path"/>, as Latin-1 text (protobuf strings are raw UTF-8 bytes in it).</summary>
    public string Received(string path)
    {
        lock (_received)
        {
            return string.Concat(_received.Where(r => r.Path == path).Select(r => Encoding.Latin1.GetString(r.Body)));
        }
    }

    private async Task LoopAsync()
    {
        while (_listener.IsListening)
        {
            HttpListenerContext context;
            try
            {
                context = await _listener.GetContextAsync();
            }
            catch (Exception e) when (e is HttpListenerException or ObjectDisposedException or InvalidOperationException)
            {
                return;
            }

            using var body = new MemoryStream();
            await context.Request.InputStream.CopyToAsync(body);
            lock (_received)
            {
                _received.Add((context.Request.Url!.AbsolutePath, body.ToArray()));
            }

            context.Response.StatusCode = 200;
            context.Response.ContentType = "application/x-protobuf";
            context.Response.ContentLength64 = 0;
            context.Response.Close();
        }
    }

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        _listener.Stop();
        _listener.Close();
        await _loop.ConfigureAwait(false);
    }
}
