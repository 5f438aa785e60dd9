using System.Globalization;
using System.Text;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>ListSuites: filters as ListScenarios' (state, created_after/before) plus preset; newest first, paged by a token.</summary>
public static class SuiteListQuery
{
    public const int DefaultPageSize = 100;
    public const int MaxPageSize = 1000;
    private const string TokenVersion = "s1";

    public static ListSuitesResponse Page(IEnumerable<SuiteSnapshot> suites, ListSuitesRequest request, Func<SuiteSnapshot, Suite> toProto)
    {
        if (request.PageSize < 0 || request.PageSize > MaxPageSize)
        {
            throw Invalid("page_size", $"must be 1..{MaxPageSize} (0 means {DefaultPageSize}); got {request.PageSize}");
        }

        if (!System.Enum.IsDefined(request.State))
        {
            throw Invalid("state", $"unknown value {(int)request.State}; allowed: SUITE_STATE_PENDING .. SUITE_STATE_FAILED, or unset");
        }

        int pageSize = request.PageSize == 0 ? DefaultPageSize : request.PageSize;
        DateTime? from = Time("created_after", request.CreatedAfter);
        DateTime? to = Time("created_before", request.CreatedBefore);
        var filterText = string.Join('|', (int)request.State, request.Preset, from?.Ticks, to?.Ticks);
        var after = Decode(request.PageToken, filterText);
        var matching = suites
            .Where(s => request.State == SuiteState.Unspecified || SuiteProtos.ToProto(s.State) == request.State)
            .Where(s => request.Preset.Length == 0 || s.Preset == request.Preset)
            .Where(s => (from is null || s.CreatedAt >= from) && (to is null || s.CreatedAt < to))
            .OrderByDescending(s => s.CreatedAt).ThenByDescending(s => s.Id, StringComparer.Ordinal)
            .Where(s => after is not { } a || s.CreatedAt < a.Created || (s.CreatedAt == a.Created && string.CompareOrdinal(s.Id, a.Id) < 0))
            .Take(pageSize + 1)
            .ToList();
        var response = new ListSuitesResponse();
        response.Suites.AddRange(matching.Take(pageSize).Select(toProto));
        if (matching.Count > pageSize)
        {
            var last = matching[pageSize - 1];
            response.NextPageToken = Convert.ToBase64String(Encoding.UTF8.GetBytes(
                string.Join('\n', TokenVersion, last.CreatedAt.Ticks.ToString(CultureInfo.InvariantCulture), last.Id, filterText)));
        }

        return response;
    }

    private static (DateTime Created, string Id)? Decode(string token, string filterText)
    {
        if (token.Length == 0)
        {
            return null;
        }

        string[] parts;
        try
        {
            parts = Encoding.UTF8.GetString(Convert.FromBase64String(token)).Split('\n');
        }
        catch (FormatException)
        {
            throw Invalid("page_token", "is not a next_page_token this daemon issued");
        }

        if (parts.Length != 4 || parts[0] != TokenVersion || !long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks))
        {
            throw Invalid("page_token", "is not a next_page_token this daemon issued");
        }

        return parts[3] == filterText
            ? (new DateTime(ticks, DateTimeKind.Utc), parts[2])
            : throw Invalid("page_token", "was issued for other filters; pass the same state, preset, created_after and created_before as for the first page");
    }

    private static DateTime? Time(string field, Google.Protobuf.WellKnownTypes.Timestamp? value)
    {
        try
        {
            return value?.ToDateTime();
        }
        catch (InvalidOperationException)
        {
            throw Invalid(field, $"must be a time between 0001-01-01 and 9999-12-31 with nanos 0..999999999; got {value!.Seconds}s {value.Nanos}ns");
        }
    }

    private static RequestRefusedException Invalid(string field, string reason) => new(RefusalKind.InvalidArgument, field, reason);
}
