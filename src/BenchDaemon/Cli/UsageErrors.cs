using System.CommandLine;
using System.CommandLine.Parsing;
using Quickenshtein;

namespace IpcBench.Daemon.Cli;

/// <summary>
/// A parse result's problems as one-line errors a user can act on: an unknown option or command with the nearest valid
/// one ("unknown option '--payload'; did you mean '--payloads'?"), then System.CommandLine's own errors for the values
/// (a value that does not parse, an option's validator). System.CommandLine finds the unknown tokens; its typo
/// correction is internal, and its ParseErrorAction writes it, localized, to stdout, and offers '-h' for a stray
/// value, so the nearest name is chosen here, by Levenshtein distance (Quickenshtein) as System.CommandLine does.
/// </summary>
internal static class UsageErrors
{
    private const int MaxDistance = 3;

    public static IReadOnlyList<string> Describe(ParseResult result)
    {
        var command = result.CommandResult.Command;
        var errors = new List<string>();
        var unknownOptions = result.UnmatchedTokens.Where(t => t.StartsWith('-')).ToList();
        foreach (var token in unknownOptions)
        {
            errors.Add(UnknownOption(command, token));
        }

        // A bare word after an unknown option is most likely its value: reported once the option is fixed, if at all.
        if (unknownOptions.Count == 0 && result.UnmatchedTokens.FirstOrDefault() is { } word)
        {
            errors.Add(command.Subcommands.Count > 0 ? UnknownCommand(command, word) : $"unexpected argument '{word}'; {CommandPath(result)} takes options only");
        }

        // System.CommandLine's own "Unrecognized command or argument 'x'" for the tokens above: said better already.
        errors.AddRange(result.Errors
            .Where(e => !(e.SymbolResult is CommandResult && result.UnmatchedTokens.Any(t => e.Message.Contains($"'{t}'", StringComparison.Ordinal))))
            .Select(e => e.Message));
        return errors;
    }

    /// <summary>How to ask for help with the command the user was typing.</summary>
    public static string HelpHint(ParseResult result) => $"see '{CommandPath(result)} --help'";

    private static string UnknownOption(Command command, string token)
    {
        if (ConfigurationArguments.LooksLikeSetting(token))
        {
            return $"unknown option '{token}'; a setting takes the form {token.Split('=')[0]}=value";
        }

        var names = command.Options.Where(o => !o.Hidden).SelectMany(o => o.Aliases.Prepend(o.Name)).Where(n => n.StartsWith("--", StringComparison.Ordinal));
        var suggestion = Suggestion(token, names);
        if (suggestion.Length == 0 && command.Subcommands.FirstOrDefault(c => c.Options.Any(o => o.Name == token)) is { } owner)
        {
            // `BenchDaemon --payloads 8`: the verb is missing, not the option.
            return $"unknown option '{token}'; it is an option of '{owner.Name}'";
        }

        return $"unknown option '{token}'{suggestion}";
    }

    private static string UnknownCommand(Command command, string word)
    {
        var suggestion = Suggestion(word, command.Subcommands.Where(c => !c.Hidden).Select(c => c.Name));
        return suggestion.Length > 0
            ? $"unknown command '{word}'{suggestion}"
            : $"unknown command '{word}'; the commands are {string.Join(", ", command.Subcommands.Where(c => !c.Hidden).Select(c => c.Name))}";
    }

    private static string Suggestion(string token, IEnumerable<string> candidates)
    {
        var nearest = Nearest(token, candidates);
        return nearest.Count == 0 ? string.Empty : "; did you mean " + string.Join(" or ", nearest.Select(n => $"'{n}'")) + "?";
    }

    /// <summary>The candidates at the smallest edit distance (at most 3, and less than the token's own length), or else the one the token begins.</summary>
    internal static IReadOnlyList<string> Nearest(string token, IEnumerable<string> candidates)
    {
        var distinct = candidates.Distinct(StringComparer.Ordinal).ToList();
        var scored = distinct.Select(c => (Name: c, Distance: Levenshtein.GetDistance(token, c))).Where(c => c.Distance <= Math.Min(MaxDistance, token.TrimStart('-').Length - 1)).ToList();
        if (scored.Count > 0)
        {
            int best = scored.Min(c => c.Distance);
            return [.. scored.Where(c => c.Distance == best).Select(c => c.Name)];
        }

        var prefixed = distinct.Where(c => c.StartsWith(token, StringComparison.Ordinal)).ToList();
        return prefixed.Count == 1 ? prefixed : [];
    }

    private static string CommandPath(ParseResult result)
    {
        var names = new List<string>();
        for (var symbol = result.CommandResult; symbol is not null; symbol = symbol.Parent as CommandResult)
        {
            names.Insert(0, symbol.Command is RootCommand ? "BenchDaemon" : symbol.Command.Name);
        }

        return string.Join(' ', names);
    }
}
