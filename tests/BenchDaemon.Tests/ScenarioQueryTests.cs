using IpcBench.Daemon.Tests.Infrastructure;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Transports;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>ListScenarios/ExportScenarios paging and filters: defaults, refusals naming the field, and page tokens.</summary>
[Collection(LightCollection.Name)]
public sealed class ScenarioQueryTests
{
    private static readonly TransportRegistry Transports = TransportRegistry.CreateDefault();

    [Fact]
    public void Defaults_AreAPageOf100_WithNoFilter()
    {
        var query = ScenarioQuery.From(Transports, new ListScenariosRequest());

        Assert.Equal(100, query.PageSize);
        Assert.Null(query.After);
        Assert.Equal(new Persistence.ScenarioFilter(null, null, null, null), query.Filter);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(1001)]
    public void PageSize_OutOfRange_IsInvalid(int pageSize) =>
        AssertInvalid(new ListScenariosRequest { PageSize = pageSize }, $"page_size: must be 1..1000, or 0 for 100; got {pageSize}");

    [Fact]
    public void UnknownTransport_IsInvalid_ListingTheKnownOnes()
    {
        var e = AssertInvalid(new ListScenariosRequest { Transport = "carrier-pigeon" }, "transport: 'carrier-pigeon' is not a transport; one of: ");
        Assert.Contains("uds", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void UnknownState_IsInvalid_ListingTheStates()
    {
        var e = AssertInvalid(new ListScenariosRequest { State = (ScenarioState)42 }, "state: unknown value 42; allowed: SCENARIO_STATE_PENDING");
        Assert.Contains("SCENARIO_STATE_FAILED", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TimeWindow_MustBeOrdered_AndTimestampsValid()
    {
        var t = Timestamp.FromDateTime(new DateTime(2025, 1, 1, 0, 0, 0, DateTimeKind.Utc));
        AssertInvalid(new ListScenariosRequest { CreatedAfter = t, CreatedBefore = t }, "created_before: must be later than created_after");
        AssertInvalid(new ListScenariosRequest { CreatedAfter = new Timestamp { Seconds = 1, Nanos = -5 } }, "created_after: must be a time between");
        AssertInvalid(new ListScenariosRequest { CreatedBefore = new Timestamp { Seconds = long.MaxValue } }, "created_before: must be a time between");
    }

    [Fact]
    public void PageToken_RoundTrips_AndIsRefusedWhenForgedOrUsedWithOtherFilters()
    {
        var first = ScenarioQuery.From(Transports, new ListScenariosRequest { Transport = "uds", PageSize = 2 });
        var last = new Scenario { Id = "abc123", CreatedAt = Timestamp.FromDateTime(new DateTime(2025, 1, 1, 0, 0, 1, DateTimeKind.Utc)) };
        var token = first.NextToken(Schema.ScenarioProtos.FromProto(last));

        var next = ScenarioQuery.From(Transports, new ListScenariosRequest { Transport = "uds", PageSize = 2, PageToken = token });
        Assert.Equal(Persistence.ScenarioKey.Of(Schema.ScenarioProtos.FromProto(last)), next.After);

        AssertInvalid(new ListScenariosRequest { Transport = "tcp", PageToken = token }, "page_token: was issued for other filters");
        AssertInvalid(new ListScenariosRequest { PageToken = "not a token!" }, "page_token: is not a next_page_token this daemon issued");
        AssertInvalid(new ListScenariosRequest { PageToken = "Zm9vfGJhcg" }, "page_token: is not a next_page_token this daemon issued");
    }

    /// <summary>Suites run now: suite_id filters like the other fields, and a page token holds to it.</summary>
    [Fact]
    public void SuiteId_FiltersTheScenarios_AndAPageTokenHoldsToIt()
    {
        var query = ScenarioQuery.From(Transports, new ListScenariosRequest { SuiteId = "s-1" });
        Assert.Equal("s-1", query.Filter.SuiteId);

        var last = new Scenario { Id = "a", CreatedAt = Google.Protobuf.WellKnownTypes.Timestamp.FromDateTime(new DateTime(2026, 1, 1, 0, 0, 0, DateTimeKind.Utc)), SuiteId = "s-1" };
        var token = query.NextToken(Schema.ScenarioProtos.FromProto(last));
        Assert.Equal("s-1", ScenarioQuery.From(Transports, new ListScenariosRequest { SuiteId = "s-1", PageToken = token }).Filter.SuiteId);
        AssertInvalid(new ListScenariosRequest { SuiteId = "s-2", PageToken = token }, "page_token: was issued for other filters");
        AssertInvalid(new ListScenariosRequest { PageToken = token }, "page_token: was issued for other filters");
    }

    private static RequestRefusedException AssertInvalid(ListScenariosRequest request, string detailStart)
    {
        var e = Assert.Throws<RequestRefusedException>(() => ScenarioQuery.From(Transports, request));
        Assert.Equal(RefusalKind.InvalidArgument, e.Kind);
        Assert.StartsWith(detailStart, e.Message, StringComparison.Ordinal);
        return e;
    }
}
