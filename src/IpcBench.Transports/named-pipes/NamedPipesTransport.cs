using System.IO.Pipes;
using IpcBench.Transports.Streams;

namespace IpcBench.Transports.NamedPipes;

/// <summary>
/// System.IO.Pipes. On Linux .NET implements a named pipe as a Unix domain socket at /tmp/CoreFxPipe_NAME, read and
/// written through PipeStream; it has no non-blocking read, so only BLOCK is offered.
/// </summary>
public sealed class NamedPipesTransport : StreamTransport
{
    private const string NamePrefix = "ipcbench.";

    public override string Id => "named-pipes";

    public override string Description => "System.IO.Pipes named pipes (PipeStream; a Unix domain socket underneath on Linux)";

    public override TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: false,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Block],
        DefaultWaitMode: WaitMode.Block,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes);

    protected override IStreamListener Listen(PublisherOptions options)
    {
        // The owner pid in the name lets a later daemon tell its dead predecessors' pipes from live ones.
        var name = $"{NamePrefix}{options.Environment.OwnerPid}.{options.ScenarioKey}.p{options.PublisherIndex}";
        return new PipeListener(name);
    }

    protected override StreamLink Connect(string address, SubscriberOptions options, CancellationToken cancellationToken)
    {
        var client = new NamedPipeClientStream(".", address, PipeDirection.InOut, PipeOptions.None);
        try
        {
            client.Connect((int)ConnectTimeout.TotalMilliseconds);
            return new PipeLink(client);
        }
        catch
        {
            client.Dispose();
            throw;
        }
    }

    public override void RemoveStaleResources(TransportEnvironment environment)
    {
        foreach (var file in Directory.EnumerateFiles(Path.GetTempPath(), $"CoreFxPipe_{NamePrefix}*"))
        {
            var parts = Path.GetFileName(file)["CoreFxPipe_".Length..].Split('.');
            if (parts.Length > 1 && int.TryParse(parts[1], out var pid) && pid != environment.OwnerPid && !ProcessInstance.IsRunning(pid))
            {
                File.Delete(file);
            }
        }
    }

    private sealed class PipeListener : IStreamListener
    {
        private readonly List<NamedPipeServerStream> _connected = [];
        private NamedPipeServerStream _waiting;

        public PipeListener(string name)
        {
            Address = name;
            // Created up front: the first server instance is what makes the pipe exist for connecting clients.
            _waiting = NewInstance();
        }

        public string Address { get; }

        public StreamLink Accept(TimeSpan timeout, CancellationToken cancellationToken)
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            deadline.CancelAfter(timeout);
            try
            {
                _waiting.WaitForConnectionAsync(deadline.Token).GetAwaiter().GetResult();
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"No subscriber connected to pipe {Address} within {timeout.TotalSeconds:0.#} s.");
            }

            var accepted = _waiting;
            _connected.Add(accepted);
            _waiting = NewInstance();
            return new PipeLink(accepted);
        }

        private NamedPipeServerStream NewInstance() => new(
            Address,
            PipeDirection.InOut,
            NamedPipeServerStream.MaxAllowedServerInstances,
            PipeTransmissionMode.Byte,
            PipeOptions.Asynchronous);

        public void Dispose()
        {
            _waiting.Dispose();
            _connected.ForEach(p => p.Dispose());
            // .NET removes the socket file with the last server instance; make sure, as a crash may have interrupted it.
            File.Delete(Path.Combine(Path.GetTempPath(), "CoreFxPipe_" + Address));
        }
    }

    private sealed class PipeLink(PipeStream stream) : StreamLink
    {
        public override int Receive(Span<byte> buffer, CancellationToken cancellationToken)
        {
            try
            {
                return stream.Read(buffer);
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException)
            {
                return 0;
            }
        }

        public override void Send(ReadOnlySpan<byte> data)
        {
            try
            {
                stream.Write(data);
            }
            catch (ObjectDisposedException)
            {
                throw new IOException("The pipe was closed locally.");
            }
        }

        public override void Dispose() => stream.Dispose();
    }
}
