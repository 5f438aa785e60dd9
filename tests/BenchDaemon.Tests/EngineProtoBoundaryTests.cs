using System.Text.RegularExpressions;
using Google.Protobuf.Reflection;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// control.proto's types (IpcBench.V1, generated) belong to the edge: Control, Run, Hosting, Cli, and Schema (the one
/// mapping between them and the engine's records). The engine folders hold records of their own. Agents may name the
/// control.proto enums that agent.proto's messages carry (wait strategy, mode, payload access): they are wire fields of
/// the agents' contract. agent.proto's own types are the agents' contract and are not control types.
/// </summary>
[Collection(LightCollection.Name)]
public sealed partial class EngineProtoBoundaryTests
{
    private static readonly string[] EngineFolders = ["Model", "Core", "Persistence", "Subscribers", "Agents", "Scenarios", "Observability"];

    private static readonly string SourceRoot = Path.Combine(RepoLayout.Root, "src");

    /// <summary>Where each engine folder lives: the engine's own assembly, the store's (Persistence) or the metrics' (Observability; its host wiring stays in BenchDaemon).</summary>
    private static IEnumerable<string> FolderPaths(string folder) =>
        folder switch
        {
            "Persistence" => [Path.Combine(SourceRoot, "IpcBench.Store", folder)],
            "Observability" => [Path.Combine(SourceRoot, "IpcBench.Metrics", folder), Path.Combine(SourceRoot, "BenchDaemon", folder)],
            _ => [Path.Combine(SourceRoot, "IpcBench.Engine", folder)],
        };

    /// <summary>Every type control.proto declares (messages, enums, the service); C# keeps their names.</summary>
    private static readonly HashSet<string> ControlTypes =
    [
        .. ControlReflection.Descriptor.MessageTypes.Select(m => m.Name),
        .. ControlReflection.Descriptor.EnumTypes.Select(e => e.Name),
        .. ControlReflection.Descriptor.Services.Select(s => s.Name),
    ];

    /// <summary>control.proto's types that agent.proto's messages use as field types: part of the agents' wire format.</summary>
    private static readonly HashSet<string> AgentWireTypes =
    [
        .. AgentReflection.Descriptor.MessageTypes
            .SelectMany(m => m.Fields.InDeclarationOrder())
            .Select(f => f.FieldType switch
            {
                FieldType.Enum => (f.EnumType.File, f.EnumType.Name),
                FieldType.Message => (f.MessageType.File, f.MessageType.Name),
                _ => (File: (FileDescriptor?)null, Name: string.Empty),
            })
            .Where(t => t.File == ControlReflection.Descriptor)
            .Select(t => t.Name),
    ];

    [Fact]
    public void EngineFolders_UseNoControlProtoType()
    {
        Assert.Contains("Mode", AgentWireTypes);
        Assert.Contains("Scenario", ControlTypes);

        var uses = EngineFolders
            .SelectMany(folder => FolderPaths(folder).SelectMany(dir => Directory.EnumerateFiles(dir, "*.cs", SearchOption.AllDirectories))
                .SelectMany(path => ControlTypeUses(folder, File.ReadAllText(path))
                    .Select(type => $"{Path.GetRelativePath(SourceRoot, path)}: {type}")))
            .ToList();

        Assert.True(uses.Count == 0, "control.proto types in the engine (map them in Schema/ScenarioProtos instead):\n" + string.Join("\n", uses));
    }

    /// <summary>Lines of the engine as it was before its records (what this rule would have reported), and lines it must let be.</summary>
    [Theory]
    [InlineData("Scenarios", "public Scenario Snapshot()", "Scenario")]
    [InlineData("Scenarios", "private ScenarioState _state = ScenarioState.Pending;", "ScenarioState")]
    [InlineData("Scenarios", "private IntervalStats? _lastInterval;", "IntervalStats")]
    [InlineData("Scenarios", "var info = new EnvironmentInfo { LogicalCores = 2 };", "EnvironmentInfo")]
    [InlineData("Persistence", "return bytes is null ? null : Scenario.Parser.ParseFrom(bytes);", "Scenario")]
    [InlineData("Persistence", "var export = new IpcBench.V1.ScenarioExport();", "ScenarioExport")]
    [InlineData("Agents", "_process = new ProcessStats { Role = \"agent\" };", "ProcessStats")]
    [InlineData("Subscribers", "public virtual ProcessStats? Process => null;", "ProcessStats")]
    [InlineData("Observability", "private static readonly ScenarioState[] States = [];", "ScenarioState")]
    [InlineData("Core", "public static LatencyStats ToLatency(HistogramBase histogram, bool roundTrip) => new();", "LatencyStats")]
    [InlineData("Scenarios", "Mode = spec.Mode == RunMode.RoundTrip ? Mode.RoundTrip : Mode.Stream,", "Mode")]
    [InlineData("Agents", "Mode = spec.Mode == RunMode.RoundTrip ? Mode.RoundTrip : Mode.Stream,", null)]
    [InlineData("Scenarios", "public RunMode Mode { get; } = spec.Mode;", null)]
    [InlineData("Scenarios", "RunTopology Topology,", null)]
    [InlineData("Scenarios", "logger.LogInformation(\"Scenario {ScenarioId} is {State}\", id, state);", null)]
    [InlineData("Subscribers", "public virtual ProcessSample? LatestProcessSample => null;", null)]
    public void TheRule_SeesControlTypes_AndOnlyThem(string folder, string line, string? reported)
    {
        var code = "using IpcBench.V1;\n\nnamespace IpcBench.Daemon." + folder + ";\n\nclass C\n{\n    " + line + "\n}\n";

        Assert.Equal(reported is null ? [] : [reported], ControlTypeUses(folder, code));
    }

    /// <summary>The control.proto types a file names, in a folder of the engine; none if it never reaches IpcBench.V1.</summary>
    private static List<string> ControlTypeUses(string folder, string source)
    {
        var code = StringLiteral().Replace(Comment().Replace(source, string.Empty), "\"\"");
        if (!code.Contains("IpcBench.V1", StringComparison.Ordinal))
        {
            return [];
        }

        return [.. TypeUse().Matches(code)
            .Select(m => m.Groups.Cast<Group>().Skip(1).First(g => g.Success).Value)
            .Where(name => ControlTypes.Contains(name) && !(folder == "Agents" && AgentWireTypes.Contains(name)))
            .Distinct(StringComparer.Ordinal)];
    }

    [GeneratedRegex(@"//[^\n]*|/\*.*?\*/", RegexOptions.Singleline | RegexOptions.CultureInvariant)]
    private static partial Regex Comment();

    [GeneratedRegex(@"@?\$?""(?:[^""\\\n]|\\.)*""", RegexOptions.CultureInvariant)]
    private static partial Regex StringLiteral();

    /// <summary>
    /// A name used as a type: qualified (V1.X), constructed (new X), cast, in a generic or array, accessed statically
    /// (X.Member), or declaring something (X name, X? name). Property names (spec.Mode, Mode = ..., RunMode Mode) are not.
    /// </summary>
    [GeneratedRegex(@"\bV1\.([A-Z]\w*)|\bnew\s+([A-Z]\w*)|(?<![\w.])([A-Z]\w*)(?=\s*\.[A-Z]|\??\s+@?[A-Za-z_]\w*\s*[;=,)({]|\s*[>\]]|\[\]|\)\s*[\w(])",
        RegexOptions.CultureInvariant)]
    private static partial Regex TypeUse();
}
