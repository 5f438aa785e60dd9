using System.Text.RegularExpressions;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The folders of the host (BenchDaemon), the lab, the metrics, the store and the engine depend on each other one way only, as
/// docs/architecture.md's Layout draws it. The assembly references already keep the engine from the store and the store
/// from the host; inside each assembly (and across Observability, split between the metrics and the host's wiring) this
/// test keeps the layers. Read from the sources (every folder is one namespace,
/// IpcBench.Daemon.&lt;Folder&gt;): a using, a fully qualified name or a name qualified from the parent namespace
/// (<c>Agents.AgentLauncher</c>) is an arrow.
/// </summary>
[Collection(LightCollection.Name)]
public sealed partial class FolderDependencyTests
{
    /// <summary>The picture: each folder and the folders it may use. Program.cs (the entry point) sits on top.</summary>
    private static readonly Dictionary<string, string[]> Allowed = new(StringComparer.Ordinal)
    {
        ["Program"] = ["Cli"],
        ["Cli"] = ["Run", "Hosting", "Observability", "Control", "Core"],
        ["Run"] = ["Lab", "Hosting", "Observability", "Control", "Scenarios", "Agents", "Persistence", "Schema", "Model", "Core"],
        ["Hosting"] = ["Observability", "Control", "Scenarios", "Agents", "Persistence", "Schema", "Model", "Core"],
        ["Observability"] = ["Control", "Scenarios", "Persistence", "Model", "Core"],
        ["Control"] = ["Scenarios", "Agents", "Persistence", "Schema", "Model", "Core"],
        ["Persistence"] = ["Scenarios", "Schema", "Model", "Core"],
        ["Scenarios"] = ["Agents", "Subscribers", "Model", "Core"],
        ["Agents"] = ["Subscribers", "Model", "Core"],
        ["Subscribers"] = ["Model", "Core"],
        ["Schema"] = ["Model", "Core"],
        ["Core"] = ["Model"],
        ["Model"] = [],
        // The control plane's client (its own assembly): it knows the contracts and the reports, no folder of the daemon.
        ["Lab"] = [],
    };

    /// <summary>The assemblies whose folders share the IpcBench.Daemon namespaces: the host, the lab, the metrics, the store, the engine.</summary>
    private static readonly string[] SourceRoots =
        [.. new[] { "BenchDaemon", "IpcBench.Lab", "IpcBench.Metrics", "IpcBench.Store", "IpcBench.Engine" }.Select(a => Path.Combine(RepoLayout.Root, "src", a))];

    [Fact]
    public void EveryFile_IsInTheNamespaceOfItsFolder()
    {
        var wrong = SourceFiles()
            .Where(f => f.Folder != "Program" && f.Namespace != "IpcBench.Daemon." + f.Folder)
            .Select(f => $"{f.RelativePath}: namespace {f.Namespace}")
            .ToList();

        Assert.True(wrong.Count == 0, "files outside their folder's namespace:\n" + string.Join("\n", wrong));
    }

    [Fact]
    public void EveryFolder_IsInThePicture()
    {
        var unknown = SourceFiles().Select(f => f.Folder).Distinct().Where(f => !Allowed.ContainsKey(f)).ToList();

        Assert.True(unknown.Count == 0, $"folders missing from the allowed picture (and docs/architecture.md's Layout): {string.Join(", ", unknown)}");
    }

    [Fact]
    public void EveryArrow_IsInThePicture()
    {
        var arrows = Arrows();
        // The parser must see arrows at all, or this test would pass on anything.
        Assert.Contains(("Hosting", "Control"), arrows.Keys);
        Assert.Contains(("Persistence", "Scenarios"), arrows.Keys);

        var forbidden = arrows
            .Where(a => !Allowed.TryGetValue(a.Key.From, out var to) || !to.Contains(a.Key.To))
            .Select(a => $"{a.Key.From} -> {a.Key.To} ({string.Join(", ", a.Value)})")
            .ToList();

        Assert.True(forbidden.Count == 0, "arrows not in the picture:\n" + string.Join("\n", forbidden));
    }

    [Fact]
    public void Folders_HaveNoCycle()
    {
        var graph = Arrows().Keys.GroupBy(a => a.From).ToDictionary(g => g.Key, g => g.Select(a => a.To).ToList());
        var cycle = FindCycle(graph);

        Assert.True(cycle is null, "folder cycle: " + (cycle is null ? "" : string.Join(" -> ", cycle)));
    }

    [Fact]
    public void ThePicture_IsItselfAcyclic()
    {
        Assert.Null(FindCycle(Allowed.ToDictionary(a => a.Key, a => a.Value.ToList())));
    }

    /// <summary>Every arrow between two folders, with the files that draw it.</summary>
    private static Dictionary<(string From, string To), SortedSet<string>> Arrows()
    {
        var folders = SourceFiles().Select(f => f.Folder).Where(f => f != "Program").ToHashSet(StringComparer.Ordinal);
        var partial = new Regex(@"(?<![\w.])(" + string.Join("|", folders) + @")\.[A-Z]\w*", RegexOptions.CultureInvariant);
        var arrows = new Dictionary<(string, string), SortedSet<string>>();
        foreach (var file in SourceFiles())
        {
            var targets = DaemonReference().Matches(file.Code).Select(m => m.Groups[1].Value)
                .Concat(partial.Matches(file.Code).Select(m => m.Groups[1].Value))
                .Where(t => t != file.Folder && t != "Tests")
                .ToHashSet(StringComparer.Ordinal);
            foreach (var target in targets)
            {
                if (!arrows.TryGetValue((file.Folder, target), out var files))
                {
                    arrows[(file.Folder, target)] = files = new SortedSet<string>(StringComparer.Ordinal);
                }

                files.Add(file.RelativePath);
            }
        }

        return arrows;
    }

    private static List<string>? FindCycle(Dictionary<string, List<string>> graph)
    {
        var done = new HashSet<string>(StringComparer.Ordinal);
        var path = new List<string>();

        List<string>? Visit(string node)
        {
            int onPath = path.IndexOf(node);
            if (onPath >= 0)
            {
                return [.. path[onPath..], node];
            }

            if (!done.Add(node))
            {
                return null;
            }

            path.Add(node);
            foreach (var next in graph.GetValueOrDefault(node) ?? [])
            {
                if (Visit(next) is { } cycle)
                {
                    return cycle;
                }
            }

            path.RemoveAt(path.Count - 1);
            return null;
        }

        return graph.Keys.Select(Visit).FirstOrDefault(c => c is not null);
    }

    private static IEnumerable<SourceFile> SourceFiles() =>
        SourceRoots.SelectMany(root => Directory.EnumerateFiles(root, "*.cs", SearchOption.AllDirectories)
            .Where(p => !IsBuildOutput(Path.GetRelativePath(root, p)))
            .Select(p =>
            {
                var relative = Path.GetRelativePath(root, p);
                var parts = relative.Split(Path.DirectorySeparatorChar);
                var code = Comment().Replace(File.ReadAllText(p), string.Empty);
                var ns = Namespace().Match(code) is { Success: true } m ? m.Groups[1].Value : string.Empty;
                return new SourceFile(relative, parts.Length == 1 ? "Program" : parts[0], ns, code);
            }))
            .ToList();

    private static bool IsBuildOutput(string relative) =>
        relative.StartsWith("bin" + Path.DirectorySeparatorChar, StringComparison.Ordinal)
        || relative.StartsWith("obj" + Path.DirectorySeparatorChar, StringComparison.Ordinal);

    [GeneratedRegex(@"//[^\n]*|/\*.*?\*/", RegexOptions.Singleline | RegexOptions.CultureInvariant)]
    private static partial Regex Comment();

    [GeneratedRegex(@"^namespace\s+([\w.]+)\s*;", RegexOptions.Multiline | RegexOptions.CultureInvariant)]
    private static partial Regex Namespace();

    /// <summary>Usings (plain, static, aliased) and fully qualified names alike.</summary>
    [GeneratedRegex(@"\bIpcBench\.Daemon\.(\w+)", RegexOptions.CultureInvariant)]
    private static partial Regex DaemonReference();

    private sealed record SourceFile(string RelativePath, string Folder, string Namespace, string Code);
}
