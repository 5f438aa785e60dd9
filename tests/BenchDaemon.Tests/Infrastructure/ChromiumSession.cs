using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// One node and one Chromium (check-report.mjs --serve) for every report check of the test run, started at the first
/// check: a Chromium start was ~3.5 CPU-s of a check's ~7, and the tests open about ten pages in a CPU-bound run. Each
/// check still gets a browser context of its own. Checks of different lanes may overlap; the script answers each by its
/// id. The browser closes when the test host ends (stdin closes, also when the host is killed); a check that times out
/// kills the session's whole tree and the next check starts a new one.
/// </summary>
internal sealed class ChromiumSession
{
    private static readonly SemaphoreSlim Starting = new(1, 1);
    private static ChromiumSession? _current;

    private readonly Process _node;
    private readonly ConcurrentDictionary<string, TaskCompletionSource<string>> _pending = new();
    private readonly SemaphoreSlim _writing = new(1, 1);
    private readonly StringBuilder _errors = new();
    private volatile bool _ended;

    private ChromiumSession(Process node)
    {
        _node = node;
        node.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is { } line)
            {
                lock (_errors)
                {
                    _errors.AppendLine(line);
                }
            }
        };
        node.BeginErrorReadLine();
        _ = ReadAnswersAsync();
    }

    private string Errors
    {
        get
        {
            lock (_errors)
            {
                return _errors.ToString();
            }
        }
    }

    /// <summary>Opens <paramref name="report"/>, saves <paramref name="screenshot"/>; the script's JSON line for it.</summary>
    public static async Task<string> CheckAsync(string node, string script, string workingDirectory, string report, string screenshot, TimeSpan timeout)
    {
        var session = await CurrentAsync(node, script, workingDirectory);
        string id = Guid.NewGuid().ToString("N");
        var answer = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        session._pending[id] = answer;
        if (session._ended)
        {
            answer.TrySetException(new Xunit.Sdk.XunitException($"check-report.mjs --serve ended; stderr: {session.Errors}"));
        }

        await session._writing.WaitAsync();
        try
        {
            await session._node.StandardInput.WriteLineAsync($"{id}\t{report}\t{screenshot}");
            await session._node.StandardInput.FlushAsync();
        }
        catch (IOException e)
        {
            answer.TrySetException(new Xunit.Sdk.XunitException($"check-report.mjs --serve is gone ({e.Message}); stderr: {session.Errors}"));
        }
        finally
        {
            session._writing.Release();
        }

        try
        {
            return await answer.Task.WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            session.Kill();
            throw new Xunit.Sdk.XunitException($"check-report.mjs did not answer for {report} in {timeout.TotalSeconds:0} s; stderr: {session.Errors}");
        }
        finally
        {
            session._pending.TryRemove(id, out _);
        }
    }

    private static async Task<ChromiumSession> CurrentAsync(string node, string script, string workingDirectory)
    {
        await Starting.WaitAsync();
        try
        {
            if (_current is { _ended: false } running)
            {
                return running;
            }

            var start = new ProcessStartInfo(node, [script, "--serve"])
            {
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
                WorkingDirectory = workingDirectory,
            };
            var process = Process.Start(start) ?? throw new InvalidOperationException("node did not start");
            var session = new ChromiumSession(process);
            AppDomain.CurrentDomain.ProcessExit += (_, _) => session.Close();
            _current = session;
            return session;
        }
        finally
        {
            Starting.Release();
        }
    }

    private async Task ReadAnswersAsync()
    {
        try
        {
            while (await _node.StandardOutput.ReadLineAsync() is { } line)
            {
                int tab = line.IndexOf('\t', StringComparison.Ordinal);
                if (tab > 0 && _pending.TryGetValue(line[..tab], out var answer))
                {
                    answer.TrySetResult(line[(tab + 1)..]);
                }
            }
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException)
        {
        }

        _ended = true;
        await Task.Run(() => _node.WaitForExit(5000));
        foreach (var answer in _pending.Values)
        {
            answer.TrySetException(new Xunit.Sdk.XunitException($"check-report.mjs --serve ended; stderr: {Errors}"));
        }
    }

    /// <summary>At the end of the run: stdin closed lets the script close its browser (and its profile directory).</summary>
    private void Close()
    {
        try
        {
            _node.StandardInput.Close();
            if (!_node.WaitForExit(10_000))
            {
                Kill();
            }
        }
        catch (Exception e) when (e is IOException or InvalidOperationException)
        {
        }
    }

    private void Kill()
    {
        _ended = true;
        try
        {
            _node.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
        }
    }
}
