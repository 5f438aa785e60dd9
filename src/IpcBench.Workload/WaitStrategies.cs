using IpcBench.Transports;
using IpcBench.V1;

namespace IpcBench.Workload;

/// <summary>The one mapping between the control plane's wait strategies and the transports' wait modes.</summary>
public static class WaitStrategies
{
    public static WaitStrategy ToProto(WaitMode mode) => mode switch
    {
        WaitMode.Spin => WaitStrategy.Spin,
        WaitMode.Yield => WaitStrategy.Yield,
        _ => WaitStrategy.Block,
    };

    /// <summary>Null for WAIT_STRATEGY_UNSPECIFIED and unknown values: what they stand for is the caller's to resolve.</summary>
    public static WaitMode? FromProto(WaitStrategy strategy) => strategy switch
    {
        WaitStrategy.Spin => WaitMode.Spin,
        WaitStrategy.Yield => WaitMode.Yield,
        WaitStrategy.Block => WaitMode.Block,
        _ => null,
    };
}
