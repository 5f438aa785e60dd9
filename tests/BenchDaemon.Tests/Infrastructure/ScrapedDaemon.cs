namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A daemon and a real Prometheus scraping it, shared by the tests of one class: starting both and waiting for the
/// first good scrape costs seconds, and what one test runs (scenarios, a suite it stops) does not change what the next
/// one queries, which names its own scenarios or reads daemon-wide gauges while it drives them. Started on first use,
/// so a class whose tests are skipped (no Prometheus) starts nothing.
/// </summary>
public sealed class ScrapedDaemon : IAsyncLifetime
{
    private readonly SemaphoreSlim _starting = new(1, 1);
    private DaemonProcess? _daemon;
    private PrometheusServer? _prometheus;

    internal async Task<(DaemonProcess Daemon, PrometheusServer Prometheus)> GetAsync()
    {
        await _starting.WaitAsync();
        try
        {
            if (_prometheus is null)
            {
                PrometheusTools.EnsureInstalled();
                // Soaks judged every second, so the Soak row has data within seconds; scenarios of seconds are never judged.
                _daemon ??= await DaemonProcess.StartAsync("--IpcBench:SoakPointSeconds=1", "--IpcBench:SoakResourceWarmupSeconds=5");
                var prometheus = await PrometheusServer.StartAsync(_daemon.MetricsPort);
                try
                {
                    await prometheus.WaitForTargetUpAsync(TimeSpan.FromSeconds(20));
                }
                catch
                {
                    await prometheus.DisposeAsync();
                    throw;
                }

                _prometheus = prometheus;
            }

            return (_daemon!, _prometheus);
        }
        finally
        {
            _starting.Release();
        }
    }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_prometheus is not null)
        {
            await _prometheus.DisposeAsync();
        }

        if (_daemon is not null)
        {
            await _daemon.DisposeAsync();
        }

        _starting.Dispose();
    }
}
