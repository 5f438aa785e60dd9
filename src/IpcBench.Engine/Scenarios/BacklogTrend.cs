namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The backlog (deliveries sent but not yet received) once a measured tick, as a least-squares line (<see cref="LineFit"/>,
/// constant memory however long a soak runs). Its growth over the window is what <see cref="Model.ValidityRules"/>
/// judges; one tick's stale agent report moves a least-squares line little, which a line through two points would not.
/// </summary>
internal sealed class BacklogTrend
{
    /// <summary>Fewer ticks than this fit no line worth judging.</summary>
    public const int MinimumTicks = 5;

    private readonly object _gate = new();
    private readonly LineFit _fit = new();

    public void Add(double seconds, double backlog)
    {
        lock (_gate)
        {
            _fit.Add(seconds, backlog);
        }
    }

    /// <summary>The fitted line's rise from the first tick to the last, in deliveries; null below <see cref="MinimumTicks"/>.</summary>
    public double? Growth
    {
        get
        {
            lock (_gate)
            {
                return _fit.Count >= MinimumTicks ? _fit.Slope()?.Change : null;
            }
        }
    }
}
