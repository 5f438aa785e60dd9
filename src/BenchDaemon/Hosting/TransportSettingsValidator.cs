using IpcBench.Daemon.Core;
using IpcBench.Transports;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Hosting;

/// <summary>
/// Checks the transports' settings (IpcBench:Transports:&lt;id&gt;) at start-up, as each transport binds them: an unknown
/// transport or setting, or a value out of range, stops the daemon naming the key and what it allows. Options are
/// validated before any hosted service starts, so this also configures process-wide transport state (iceoryx2's
/// native library path and log level) before observability first probes the binding.
/// </summary>
public sealed class TransportSettingsValidator : IValidateOptions<DaemonOptions>
{
    public ValidateOptionsResult Validate(string? name, DaemonOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        try
        {
            TransportRegistry.CreateDefault(options.TransportSettings());
            return ValidateOptionsResult.Success;
        }
        catch (TransportSettingsException e)
        {
            return ValidateOptionsResult.Fail(e.Message);
        }
    }
}
