using System.Diagnostics;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>Copies the daemon output of one test's lifetime into that test's output when the test ends.</summary>
internal sealed class OutputForwarder(OutputLog log, ITestOutputHelper output) : IDisposable
{
    private readonly int _from = log.Count;

    public void Dispose()
    {
        var lines = log.Lines(_from);
        output.WriteLine($"--- daemon output during this test ({lines.Count} lines) ---");
        foreach (var line in lines)
        {
            output.WriteLine(line);
        }
    }
}

/// <summary>A child process's command line, then everything it printed, stdout and stderr interleaved as they arrived.</summary>
internal sealed class OutputLog
{
    private readonly List<string> _lines = [];

    public Process Start(ProcessStartInfo start)
    {
        Add($"{start.FileName} {string.Join(' ', start.ArgumentList)}", "$");
        var process = new Process { StartInfo = start };
        process.OutputDataReceived += (_, e) => Add(e.Data, "out");
        process.ErrorDataReceived += (_, e) => Add(e.Data, "err");
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    public int Count
    {
        get
        {
            lock (_lines)
            {
                return _lines.Count;
            }
        }
    }

    public string Text => string.Join('\n', Lines(0));

    public IReadOnlyList<string> Lines(int from)
    {
        lock (_lines)
        {
            return _lines.Count > from ? _lines.GetRange(from, _lines.Count - from) : [];
        }
    }

    /// <summary>The last <paramref name="maxLines"/> lines, headed for a failure message.</summary>
    public string Describe(int maxLines = 200)
    {
        lock (_lines)
        {
            int from = Math.Max(0, _lines.Count - maxLines);
            return $"--- daemon output ({(from > 0 ? $"last {maxLines} of " : string.Empty)}{_lines.Count} lines) ---\n"
                + string.Join('\n', _lines.Skip(from)) + "\n--- end of daemon output ---";
        }
    }

    public void Add(string? line, string stream)
    {
        if (line is not null)
        {
            lock (_lines)
            {
                _lines.Add($"[{stream}] {line}");
            }
        }
    }
}
