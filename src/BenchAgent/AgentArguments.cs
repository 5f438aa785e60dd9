namespace IpcBench.Agent;

/// <summary>What the daemon tells an agent on its command line (and its token in the environment).</summary>
public sealed record AgentArguments(string DaemonAddress, string ScenarioId, int Index, int DaemonPid, string Token)
{
    public const string TokenVariable = "IPCBENCH_AGENT_TOKEN";

    public static AgentArguments Parse(string[] args)
    {
        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        for (int i = 0; i < args.Length; i++)
        {
            if (!args[i].StartsWith("--", StringComparison.Ordinal) || i + 1 >= args.Length)
            {
                throw new ArgumentException($"unexpected argument '{args[i]}'");
            }

            values[args[i][2..]] = args[++i];
        }

        string Required(string name) => values.TryGetValue(name, out var value) && value.Length > 0
            ? value
            : throw new ArgumentException($"--{name} is required");

        int RequiredInt(string name) => int.TryParse(Required(name), out var value) && value >= 0
            ? value
            : throw new ArgumentException($"--{name} must be a non-negative whole number");

        var token = Environment.GetEnvironmentVariable(TokenVariable);
        if (string.IsNullOrEmpty(token))
        {
            throw new ArgumentException($"{TokenVariable} is not set; agents are started by the daemon, not by hand");
        }

        return new AgentArguments(Required("daemon"), Required("scenario"), RequiredInt("index"), RequiredInt("daemon-pid"), token);
    }
}
