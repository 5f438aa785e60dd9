using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The charting files inlined into every HTML report are exactly what npm ships for the versions tests/package.json
/// pins, each with its licence: updating Chart.js is `npm install chart.js@X` in tests/ and copying the file over.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ReportAssetTests
{
    private static readonly string Assets = Path.Combine(RepoLayout.Root, "src", "IpcBench.Reports", "Assets");

    [Theory]
    [InlineData("chart.umd.min.js", "chart.js/dist/chart.umd.min.js")]
    [InlineData("chart.js.LICENSE.md", "chart.js/LICENSE.md")]
    [InlineData("chartjs-chart-error-bars.umd.min.js", "chartjs-chart-error-bars/build/index.umd.min.js")]
    [InlineData("chartjs-chart-error-bars.LICENSE", "chartjs-chart-error-bars/LICENSE")]
    public void VendoredFile_IsTheNpmPackagesFile(string vendored, string package)
    {
        var source = Path.Combine(ChromiumTools.NodeModules, package);
        if (!File.Exists(source))
        {
            Assert.False(ChromiumTools.Required, $"{source} is missing: run `npm ci` in tests/ (.ci/run does)");
            return;
        }

        Assert.True(File.ReadAllBytes(source).AsSpan().SequenceEqual(File.ReadAllBytes(Path.Combine(Assets, vendored))),
            $"{vendored} differs from {package} in tests/node_modules: copy the pinned version over");
    }
}
