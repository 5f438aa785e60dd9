using System.CommandLine;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Run;

namespace IpcBench.Daemon.Cli;

/// <summary>
/// `BenchDaemon run`: its options read (RunOptions), then the suite run in process (<see cref="LocalRun"/>) or on a
/// lab's daemons (<see cref="LabRun"/>).
/// </summary>
public static class RunCommand
{
    public static Command Create(IReadOnlyList<string> configurationArguments)
    {
        var options = new RunOptions();
        var command = new Command("run", "Run a benchmark matrix once and print the results (about two minutes with no options)");
        foreach (var option in options.All)
        {
            command.Options.Add(option);
        }

        command.Validators.Add(result => options.Lab.Validate(result,
            [(options.Baseline, "compare a machine's report-NAME.json with `compare` instead"), (options.SampleEvery, "the daemons sample at their default"),
            (options.FreshAgents, "each daemon keeps agents warm as it was started; start it with --IpcBench:WarmAgentIdleSeconds=0 for fresh ones")]));

        command.SetAction((result, token) =>
        {
            RunSettings settings;
            try
            {
                settings = options.Read(result);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return Task.FromResult(ExitCodes.Usage);
            }

            return settings.Lab is { } lab ? LabRun.ExecuteAsync(settings, lab, token) : LocalRun.ExecuteAsync(settings, [.. configurationArguments], options.Refusal, token);
        });
        return command;
    }
}
