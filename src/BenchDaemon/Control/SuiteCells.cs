using Google.Protobuf.WellKnownTypes;
using IpcBench.Reports;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// A suite's cells and presets in the proto view: a cell becomes the ScenarioSpec the validator checks and the engine
/// runs; a preset becomes what ListSuitePresets answers. The one place Reports' types meet control.proto's.
/// </summary>
public static class SuiteCells
{
    public static ScenarioSpec ToSpec(CellKey key, TimeSpan duration, TimeSpan warmup, string name) => new()
    {
        Transport = key.Transport,
        PayloadBytes = key.PayloadBytes,
        Publishers = key.Publishers,
        Subscribers = key.Subscribers,
        Topology = key.Topology == CellTopology.Paired ? Topology.Paired : Topology.AllToAll,
        PayloadAccess = key.Access == CellAccess.HeaderOnly ? PayloadAccess.HeaderOnly : PayloadAccess.Full,
        Mode = key.Mode == CellMode.RoundTrip ? Mode.RoundTrip : Mode.Stream,
        WaitStrategy = key.Wait switch
        {
            CellWait.Spin => WaitStrategy.Spin,
            CellWait.Yield => WaitStrategy.Yield,
            CellWait.Block => WaitStrategy.Block,
            _ => WaitStrategy.Unspecified,
        },
        Duration = Duration.FromTimeSpan(duration),
        Warmup = Duration.FromTimeSpan(warmup),
        RatePerPublisher = key.RatePerPublisher,
        Name = name,
    };

    public static ScenarioSpec ToSpec(ReferencePreset preset, PresetCell cell) =>
        ToSpec(cell.Key, preset.Duration, preset.Warmup, name: preset.Id);

    public static IpcBench.V1.SuitePreset ToProto(ReferencePreset preset)
    {
        var proto = new IpcBench.V1.SuitePreset { Id = preset.Id, Title = preset.Title, Reproduces = preset.Reproduces };
        if (preset.SearchMaxP99Latency is { } bound)
        {
            proto.RateSearch = SuiteRates.ToProto(new Model.RateSearchSpec(bound, Model.RateSearchSpec.DefaultMinDeliveredRatio, Model.RateSearchSpec.DefaultMaxSteps));
        }

        for (int i = 0; i < preset.Cells.Count; i++)
        {
            proto.Cells.Add(ToSpec(preset, preset.Cells[i]));
            foreach (var figure in preset.Cells[i].Published)
            {
                proto.Figures.Add(new PresetFigure { Cell = i, Figure = ToProto(figure, measured: null) });
            }
        }

        return proto;
    }

    public static IpcBench.V1.PublishedFigure ToProto(Reports.PublishedFigure figure, double? measured) => new()
    {
        Reference = figure.Reference,
        Label = figure.Label + (figure.Low == figure.High ? string.Empty : $" ({figure.PublishedText})"),
        Published = figure.Value,
        Unit = figure.Unit,
        Measured = measured ?? 0,
        Ratio = measured is { } m && figure.Value != 0 ? m / figure.Value : 0,
        MethodDifferences = figure.MethodDifferences,
    };
}
