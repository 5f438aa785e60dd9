using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Reports;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>The suite report formats: one registration list, and control.proto's ReportFormat naming each of them.</summary>
[Collection(LightCollection.Name)]
public sealed class SuiteReportFormatsTests
{
    [Fact]
    public void EveryProtoValue_HasARegisteredFormat_AndEveryFormatAProtoValue()
    {
        var protoNames = Enum.GetValues<ReportFormat>().Where(v => v != ReportFormat.Unspecified).Select(v => v.ToString().ToLowerInvariant()).Order();

        Assert.Equal(protoNames, SuiteReportFormats.All.Select(f => f.Id).Order());
    }

    [Fact]
    public void Ids_AndFileNames_AreUnique_AndJsonIsTheDefault()
    {
        Assert.Equal(SuiteReportFormats.All.Count, SuiteReportFormats.All.Select(f => f.Id).Distinct().Count());
        Assert.Equal(SuiteReportFormats.All.Count, SuiteReportFormats.All.Select(f => f.FileName).Distinct().Count());
        Assert.All(SuiteReportFormats.All, f => Assert.Equal(f.Id.ToLowerInvariant(), f.Id));
        Assert.Equal("json", SuiteReportFormats.Default.Id);
        Assert.Null(SuiteReportFormats.Find("JSON"));
    }
}
