using System.CommandLine;
using System.CommandLine.Help;
using System.Globalization;

namespace IpcBench.Agent;

/// <summary>What the daemon tells an agent on its command line (and its token in the environment).</summary>
/// <param name="TraceParent">The W3C traceparent of the daemon's span that launched it, when the daemon is traced.</param>
public sealed record AgentArguments(string DaemonAddress, string ScenarioId, int Index, int DaemonPid, string Token, string? TraceParent = null)
{
    public const string TokenVariable = "IPCBENCH_AGENT_TOKEN";

    /// <summary>
    /// The daemon's AgentLauncher passes exactly these; anything missing, unknown or malformed is a usage error naming the
    /// argument (System.CommandLine's messages), thrown as an ArgumentException. Null: --help was asked for and printed.
    /// </summary>
    public static AgentArguments? Parse(string[] args, string? tokenVariable)
    {
        var daemon = NonEmpty("--daemon", "The daemon's agent socket, unix:/path");
        var scenario = NonEmpty("--scenario", "The scenario this subscriber belongs to");
        var index = NonNegative("--index", "This subscriber's index in the scenario");
        var daemonPid = NonNegative("--daemon-pid", "The daemon's pid: the agent exits when that process is gone");
        var traceParent = new Option<string?>("--traceparent") { Description = "The W3C traceparent of the daemon's span that launched this agent" };
        var command = new RootCommand("IpcBench subscriber agent; started by BenchDaemon, not by hand") { daemon, scenario, index, daemonPid, traceParent };
        var result = command.Parse(args);
        if (result.Action is HelpAction)
        {
            result.Invoke();
            return null;
        }

        if (result.Errors.Count > 0)
        {
            throw new ArgumentException(string.Join(Environment.NewLine, result.Errors.Select(e => e.Message)));
        }

        if (string.IsNullOrEmpty(tokenVariable))
        {
            throw new ArgumentException($"{TokenVariable} is not set; agents are started by the daemon, not by hand");
        }

        return new AgentArguments(result.GetRequiredValue(daemon), result.GetRequiredValue(scenario), result.GetValue(index),
            result.GetValue(daemonPid), tokenVariable, result.GetValue(traceParent));
    }

    private static Option<string> NonEmpty(string name, string description)
    {
        var option = new Option<string>(name) { Description = description, Required = true };
        option.Validators.Add(result =>
        {
            if (string.IsNullOrEmpty(result.GetValueOrDefault<string>()))
            {
                result.AddError($"{name} must not be empty");
            }
        });
        return option;
    }

    private static Option<int> NonNegative(string name, string description) => new(name)
    {
        Description = description,
        Required = true,
        CustomParser = result =>
        {
            var text = result.Tokens.Count > 0 ? result.Tokens[^1].Value : string.Empty;
            if (int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) && value >= 0)
            {
                return value;
            }

            result.AddError($"{name}: '{text}' is not a non-negative whole number");
            return 0;
        },
    };
}
