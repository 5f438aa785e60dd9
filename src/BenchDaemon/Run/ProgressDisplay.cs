using Spectre.Console;

namespace IpcBench.Daemon.Run;

/// <summary>
/// Whether `run` draws a live progress display on stderr or writes plain progress lines, decided once here. Live needs
/// stderr to be a terminal that takes ANSI escapes: TERM=dumb never does, otherwise Spectre.Console's detection decides
/// (it knows the TERM values that do), and a CI service it recognizes means not interactive. NO_COLOR keeps the display
/// but drops its colours.
/// </summary>
public static class ProgressDisplay
{
    /// <summary>The console to draw the live display on, or null for plain lines.</summary>
    /// <param name="errorRedirected">Console.IsErrorRedirected: a file or pipe never gets cursor movements.</param>
    /// <param name="error">Where the display goes (stderr), so stdout keeps only the Markdown tables.</param>
    /// <param name="environment">The process's variables, given by the caller (tests pass their own).</param>
    public static IAnsiConsole? LiveConsole(bool errorRedirected, TextWriter error, IReadOnlyDictionary<string, string> environment)
    {
        if (errorRedirected || environment.GetValueOrDefault("TERM") == "dumb")
        {
            return null;
        }

        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(error),
            Ansi = AnsiSupport.Detect,
            // https://no-color.org: present and not empty, whatever its value.
            ColorSystem = string.IsNullOrEmpty(environment.GetValueOrDefault("NO_COLOR")) ? ColorSystemSupport.Detect : ColorSystemSupport.NoColors,
            // Stderr being a terminal is what makes this interactive; the CI enrichers may still turn it off.
            Interactive = InteractionSupport.Yes,
            EnvironmentVariables = new Dictionary<string, string>(environment),
        });
        return console.Profile.Capabilities is { Ansi: true, Interactive: true } ? console : null;
    }
}
