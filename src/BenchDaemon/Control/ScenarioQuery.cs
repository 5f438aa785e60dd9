using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Schema;
using IpcBench.Transports;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// The filters and paging of ListScenarios and ExportScenarios, checked like a spec: INVALID_ARGUMENT naming the field
/// and what is allowed. Page tokens are opaque to users: the last key of the page, and a hash of the filters, so a
/// token is refused with other filters rather than silently skipping or repeating scenarios.
/// </summary>
public sealed record ScenarioQuery(ScenarioFilter Filter, ScenarioKey? After, int PageSize)
{
    public const int DefaultPageSize = 100;
    public const int MaxPageSize = 1000;
    private const string TokenVersion = "1";

    public static ScenarioQuery Parse(TransportRegistry transports, int pageSize, string pageToken, string transport, ScenarioState state,
        Timestamp? createdAfter, Timestamp? createdBefore)
    {
        if (pageSize < 0 || pageSize > MaxPageSize)
        {
            throw Invalid("page_size", $"must be 1..{MaxPageSize}, or 0 for {DefaultPageSize}; got {pageSize}");
        }

        string? transportFilter = null;
        if (!string.IsNullOrEmpty(transport))
        {
            transportFilter = transports.Find(transport)?.Id
                ?? throw Invalid("transport", $"'{transport}' is not a transport; one of: {string.Join(", ", transports.All.Select(t => t.Id))}");
        }

        RunState? stateFilter = null;
        if (state != ScenarioState.Unspecified)
        {
            var states = ControlReflection.Descriptor.EnumTypes.First(e => e.Name == nameof(ScenarioState));
            if (states.FindValueByNumber((int)state) is null)
            {
                throw Invalid("state", $"unknown value {(int)state}; allowed: {string.Join(", ", states.Values.Skip(1).Select(v => v.Name))}");
            }

            stateFilter = ScenarioProtos.FromProto(state);
        }

        var after = ReadTimestamp("created_after", createdAfter);
        var before = ReadTimestamp("created_before", createdBefore);
        if (after is { } from && before is { } to && to <= from)
        {
            throw Invalid("created_before", $"must be later than created_after ({Format(from)}); got {Format(to)}");
        }

        var filter = new ScenarioFilter(transportFilter, stateFilter, after, before);
        return new ScenarioQuery(filter, DecodeToken(pageToken, filter), pageSize == 0 ? DefaultPageSize : pageSize);
    }

    public static ScenarioQuery From(TransportRegistry transports, ListScenariosRequest r)
    {
        if (string.IsNullOrEmpty(r.SuiteId))
        {
            return Parse(transports, r.PageSize, r.PageToken, r.Transport, r.State, r.CreatedAfter, r.CreatedBefore);
        }

        // The suite filter joins the others; the page token is checked against all of them.
        var query = Parse(transports, r.PageSize, pageToken: string.Empty, r.Transport, r.State, r.CreatedAfter, r.CreatedBefore);
        var filter = query.Filter with { SuiteId = r.SuiteId };
        return new ScenarioQuery(filter, DecodeToken(r.PageToken, filter), query.PageSize);
    }

    public static ScenarioQuery From(TransportRegistry transports, ExportScenariosRequest r) =>
        Parse(transports, r.PageSize, r.PageToken, r.Transport, r.State, r.CreatedAfter, r.CreatedBefore);

    /// <summary>The token of the page after one ending with <paramref name="last"/>.</summary>
    public string NextToken(ScenarioSnapshot last)
    {
        var key = ScenarioKey.Of(last);
        var text = string.Join('|', TokenVersion, key.CreatedAtMicros.ToString(CultureInfo.InvariantCulture), key.Id, FilterHash(Filter));
        return Base64Url(Encoding.UTF8.GetBytes(text));
    }

    private static ScenarioKey? DecodeToken(string token, ScenarioFilter filter)
    {
        if (string.IsNullOrEmpty(token))
        {
            return null;
        }

        string[] parts;
        try
        {
            parts = Encoding.UTF8.GetString(FromBase64Url(token)).Split('|');
        }
        catch (FormatException)
        {
            throw Invalid("page_token", "is not a next_page_token this daemon issued");
        }

        if (parts.Length != 4 || parts[0] != TokenVersion
            || !long.TryParse(parts[1], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var created) || parts[2].Length == 0)
        {
            throw Invalid("page_token", "is not a next_page_token this daemon issued");
        }

        if (parts[3] != FilterHash(filter))
        {
            throw Invalid("page_token", "was issued for other filters; pass the same transport, state, suite_id, created_after and created_before as for the first page");
        }

        return new ScenarioKey(created, parts[2]);
    }

    private static string FilterHash(ScenarioFilter filter)
    {
        var text = string.Join('|', filter.Transport ?? string.Empty, filter.State?.ToString() ?? string.Empty, filter.SuiteId ?? string.Empty,
            filter.CreatedAfter is { } a ? ScenarioStore.ToMicros(a).ToString(CultureInfo.InvariantCulture) : string.Empty,
            filter.CreatedBefore is { } b ? ScenarioStore.ToMicros(b).ToString(CultureInfo.InvariantCulture) : string.Empty);
        return Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(text)))[..12];
    }

    private static DateTime? ReadTimestamp(string field, Timestamp? value)
    {
        if (value is null)
        {
            return null;
        }

        try
        {
            return value.ToDateTime();
        }
        catch (InvalidOperationException)
        {
            throw Invalid(field, $"must be a time between 0001-01-01 and 9999-12-31 with nanos 0..999999999; got {value.Seconds}s {value.Nanos}ns");
        }
    }

    private static string Format(DateTime time) => time.ToString("yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'", CultureInfo.InvariantCulture);

    private static string Base64Url(byte[] bytes) => Convert.ToBase64String(bytes).TrimEnd('=').Replace('+', '-').Replace('/', '_');

    private static byte[] FromBase64Url(string text)
    {
        var padded = text.Replace('-', '+').Replace('_', '/');
        return Convert.FromBase64String(padded + new string('=', (4 - padded.Length % 4) % 4));
    }

    private static RequestRefusedException Invalid(string field, string message) => new(RefusalKind.InvalidArgument, field, message);
}
