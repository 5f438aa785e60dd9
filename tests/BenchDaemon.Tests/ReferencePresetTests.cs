using System.Globalization;
using System.Text.RegularExpressions;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Transports;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The presets against the daemon's own validator (every cell is a spec StartScenario would accept) and against
/// docs/published-figures.md itself (every published figure of its tables sits on a cell of the preset for its section).
/// </summary>
[Collection(LightCollection.Name)]
public sealed partial class ReferencePresetTests
{
    private static readonly string ReferencePath = Path.Combine(RepoLayout.Root, "docs", "published-figures.md");

    private static readonly PresetCatalog Presets = new(TransportRegistry.CreateDefault().All.Select(t => t.Id));

    public static TheoryData<string> PresetIds() => new(ReferencePresets.All.Select(p => p.Id));

    [Fact]
    public void Presets_AreReference1To5_OnePerSection()
    {
        Assert.Equal(["reference-1", "reference-2", "reference-3", "reference-4", "reference-5"], ReferencePresets.All.Select(p => p.Id));
        Assert.All(ReferencePresets.All, p => Assert.Contains($"published-figures.md §{p.Id[^1]}", p.Reproduces, StringComparison.Ordinal));
        // What the reports cite exists: a "## N." section in docs/published-figures.md for every preset.
        Assert.All(ReferencePresets.All, p => Assert.NotEmpty(SectionText(p.Id[^1] - '0')));
    }

    [Theory]
    [MemberData(nameof(PresetIds))]
    public void EveryCell_IsAValidSpec_ForTheDaemonsValidator(string id)
    {
        var preset = Presets.Find(id)!;
        var registry = TransportRegistry.CreateDefault();
        var validator = new SpecValidator(registry, Options.Create(new DaemonOptions()));
        bool iceoryx2Required = Environment.GetEnvironmentVariable("IPCBENCH_REQUIRE_ICEORYX2") == "1";

        foreach (var cell in preset.Cells)
        {
            var spec = SuiteCells.ToSpec(preset, cell);
            if (registry.Find(cell.Key.Transport)?.UnavailableReason is { } reason && !(cell.Key.Transport == "iceoryx2" && iceoryx2Required))
            {
                // Cannot be resolved on this machine (FAILED_PRECONDITION); its transport's own tests say why.
                var refused = Assert.Throws<RequestRefusedException>(() => validator.Resolve(spec));
                Assert.Equal(RefusalKind.FailedPrecondition, refused.Kind);
                continue;
            }

            var resolved = validator.Resolve(spec);
            Assert.Equal(preset.Duration, resolved.Duration);
            Assert.Equal(preset.Warmup, resolved.Warmup);
        }
    }

    [Theory]
    [MemberData(nameof(PresetIds))]
    public void Cells_AreDistinct_AndEveryFigureFitsItsCell(string id)
    {
        var preset = Presets.Find(id)!;

        Assert.Equal(preset.Cells.Count, preset.Cells.Select(c => c.Key).Distinct().Count());
        Assert.Contains(preset.Cells, c => c.Published.Count > 0);
        foreach (var cell in preset.Cells)
        {
            foreach (var figure in cell.Published)
            {
                Assert.Equal($"published-figures.md §{id[^1]}", figure.Reference);
                Assert.True(figure.Low > 0 && figure.High >= figure.Low, figure.ToString());
                Assert.False(string.IsNullOrWhiteSpace(figure.MethodDifferences), figure.ToString());
                if (figure.Metric == FigureMetric.OneWayLatencyMicroseconds)
                {
                    Assert.Equal(CellMode.RoundTrip, cell.Key.Mode);
                }
            }
        }

        var proto = SuiteCells.ToProto(preset);
        Assert.Equal(preset.Cells.Count, proto.Cells.Count);
        Assert.Equal(preset.Cells.Sum(c => c.Published.Count), proto.Figures.Count);
        Assert.All(proto.Figures, f => Assert.InRange(f.Cell, 0, proto.Cells.Count - 1));
    }

    /// <summary>§1's and §2's tables, and §5's list, read from docs/published-figures.md: each figure is on a cell of that section's preset (or named as not reproduced).</summary>
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(5)]
    public void EveryPublishedFigure_OfTheSection_IsAttachedToACell(int section)
    {
        var preset = Presets.Find($"reference-{section}")!;
        var attached = preset.Cells.SelectMany(c => c.Published).ToList();
        var figures = PublishedNumbers(SectionText(section)).ToList();
        Assert.True(figures.Count >= (section == 2 ? 26 : 12), $"parsed only {figures.Count} figures from §{section}");

        var missing = figures
            .Where(f => !attached.Any(a => a.Metric == f.Metric && (Near(a.Low, f.Value) || Near(a.High, f.Value)))
                && !preset.NotReproduced.Any(n => n.Contains(f.Text, StringComparison.Ordinal)))
            .Select(f => $"{f.Text} ({f.Metric})")
            .ToList();
        Assert.True(missing.Count == 0, $"§{section} figures on no cell of {preset.Id}: {string.Join(", ", missing)}");
    }

    /// <summary>
    /// Reference presets name transports as data: a transport renamed or dropped in the registry must not leave a suite
    /// preset naming what StartSuite refuses. The saturation preset takes the registry's ids, so it names each one the
    /// registry ships, and one the registry gains with no second list to edit.
    /// </summary>
    [Fact]
    public void EveryTransportAPresetNames_IsInTheRegistry_AndSaturationNamesThemAll()
    {
        var registered = TransportRegistry.CreateDefault().All.Select(t => t.Id).ToList();
        foreach (var preset in Presets.Suites)
        {
            var named = preset.Cells.Select(c => c.Key.Transport).Distinct().ToList();
            Assert.True(named.All(registered.Contains), $"{preset.Id} names transports the registry lacks: {string.Join(", ", named.Except(registered))}");
        }

        var saturation = Presets.Find("saturation-1")!;
        Assert.Equal(registered, saturation.Cells.Select(c => c.Key.Transport).Distinct());
        var grown = new PresetCatalog([.. registered, "next-transport"]).Find("saturation-1")!;
        Assert.Equal([(1, 1), (2, 4)], grown.Cells.Where(c => c.Key.Transport == "next-transport").Select(c => (c.Key.Publishers, c.Key.Subscribers)));
    }

    private static bool Near(double a, double b) => Math.Abs(a - b) <= 0.005 * b;

    private static string SectionText(int section)
    {
        var text = File.ReadAllText(ReferencePath);
        int start = text.IndexOf($"## {section}. ", StringComparison.Ordinal);
        Assert.True(start >= 0, $"published-figures.md has no section {section}");
        int end = text.IndexOf("\n## ", start + 1, StringComparison.Ordinal);
        return text[start..(end < 0 ? text.Length : end)];
    }

    /// <summary>Figures in table cells (after the first column) and in "name X M / Y M" lists: msg/s with K/M, or MB/s.</summary>
    private static IEnumerable<(string Text, double Value, FigureMetric Metric)> PublishedNumbers(string section)
    {
        foreach (var line in section.Split('\n'))
        {
            string body;
            if (line.StartsWith('|') && !line.StartsWith("|---", StringComparison.Ordinal) && !line.Contains("Payload", StringComparison.Ordinal)
                && !line.Contains("pipe |", StringComparison.Ordinal))
            {
                body = string.Join('|', line.Split('|').Skip(2));
            }
            else if (line.Contains(" K /", StringComparison.Ordinal) || line.Contains(" M /", StringComparison.Ordinal))
            {
                body = line[(line.IndexOf(':') + 1)..];
            }
            else
            {
                continue;
            }

            foreach (Match m in Number().Matches(body))
            {
                double value = double.Parse(m.Groups["n"].Value.Replace(",", string.Empty), CultureInfo.InvariantCulture)
                    * (m.Groups["s"].Value switch { "M" => 1e6, "K" => 1e3, _ => 1 });
                yield return (m.Value.Trim(), value, m.Groups["u"].Value == "MB/s" ? FigureMetric.MebibytesPerSecond : FigureMetric.MessagesPerSecond);
            }
        }
    }

    [GeneratedRegex(@"(?<n>\d[\d,]*(?:\.\d+)?)(?:\s(?<s>[MK])\b)?(?:\s(?<u>MB/s|msg/s))?", RegexOptions.CultureInvariant)]
    private static partial Regex Number();
}
