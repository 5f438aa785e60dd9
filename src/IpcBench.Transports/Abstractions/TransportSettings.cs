using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Reflection;
using Microsoft.Extensions.Configuration;

namespace IpcBench.Transports;

/// <summary>
/// What configures the transports: the one shared-memory directory (configuration key IpcBench:SharedMemoryDirectory,
/// the directory admission control checks too) and each transport's own section, IpcBench:Transports:&lt;id&gt;, as the
/// key/value pairs configured. A transport binds its section into its own settings type (kept in its folder) with
/// <see cref="Bind{T}"/>. The daemon builds this from its configuration and hands an agent what its transport needs in
/// the subscriber's set-up, so no process reads the environment for transport settings.
/// </summary>
public sealed class TransportSettings
{
    public const string DefaultSharedMemoryDirectory = "/dev/shm";

    /// <summary>The configuration section holding one subsection per transport id.</summary>
    public const string SectionPath = "IpcBench:Transports";

    private readonly Dictionary<string, IReadOnlyDictionary<string, string>> _sections = new(StringComparer.Ordinal);

    /// <param name="sharedMemoryDirectory">Where every shared-memory transport keeps its segments.</param>
    /// <param name="sections">Per transport id: its settings, setting name to configured value.</param>
    public TransportSettings(
        string sharedMemoryDirectory = DefaultSharedMemoryDirectory,
        IEnumerable<KeyValuePair<string, IReadOnlyDictionary<string, string>>>? sections = null)
    {
        SharedMemoryDirectory = sharedMemoryDirectory;
        foreach (var (id, values) in sections ?? [])
        {
            _sections[id] = values;
        }
    }

    public string SharedMemoryDirectory { get; }

    /// <summary>Transport ids that have a section.</summary>
    public IEnumerable<string> Configured => _sections.Keys;

    /// <summary>The configured values of one transport's section (empty when it has none).</summary>
    public IReadOnlyDictionary<string, string> SectionOf(string transportId) =>
        _sections.TryGetValue(transportId, out var values) ? values : new Dictionary<string, string>();

    /// <summary>
    /// A transport's settings: defaults of <typeparamref name="T"/> overridden by its section, then checked by the data
    /// annotations of <typeparamref name="T"/> (and <see cref="IValidatableObject"/>). Only public settable properties
    /// are settings; any other key is refused, so a misspelled setting does not pass unnoticed.
    /// </summary>
    /// <exception cref="TransportSettingsException">A value is unknown, unreadable or out of range; the message names its key.</exception>
    public T Bind<T>(string transportId)
        where T : class, new()
    {
        var values = SectionOf(transportId);
        var settable = typeof(T).GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.SetMethod is { IsPublic: true })
            .Select(p => p.Name)
            .ToList();
        var errors = values.Keys
            .Where(key => !settable.Contains(key, StringComparer.OrdinalIgnoreCase))
            .Select(key => $"{KeyOf(transportId, key)}: not a setting of {transportId}; known: {string.Join(", ", settable)}")
            .ToList();
        if (errors.Count > 0)
        {
            throw new TransportSettingsException(errors);
        }

        var settings = new T();
        try
        {
            new ConfigurationBuilder()
                .AddInMemoryCollection(values.Select(v => new KeyValuePair<string, string?>(v.Key, v.Value)))
                .Build()
                .Bind(settings);
        }
        catch (InvalidOperationException e)
        {
            throw new TransportSettingsException([$"{SectionPath}:{transportId}: {e.Message}"]);
        }

        var results = new List<ValidationResult>();
        if (!Validator.TryValidateObject(settings, new ValidationContext(settings), results, validateAllProperties: true))
        {
            throw new TransportSettingsException(results.Select(r => Describe(transportId, settings, r)));
        }

        return settings;
    }

    private static string KeyOf(string transportId, string setting) => $"{SectionPath}:{transportId}:{setting}";

    private static string Describe(string transportId, object settings, ValidationResult result)
    {
        var member = result.MemberNames.FirstOrDefault();
        if (member is null)
        {
            return $"{SectionPath}:{transportId}: {result.ErrorMessage?.TrimEnd('.')}";
        }

        var value = settings.GetType().GetProperty(member)?.GetValue(settings);
        return string.Create(CultureInfo.InvariantCulture, $"{KeyOf(transportId, member)}: {result.ErrorMessage?.TrimEnd('.')}; got {value}");
    }
}

/// <summary>Transport settings that cannot be used; the message names each key and what it allows.</summary>
public sealed class TransportSettingsException(IEnumerable<string> errors) : ArgumentException(string.Join("; ", errors))
{
}
