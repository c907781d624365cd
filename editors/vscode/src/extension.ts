// Starts `ddplint lsp` for Python files and notebooks and passes the ddplint.* settings to it as
// initializationOptions. Which `ddplint` runs: `ddplint.path`, else `python -m ddplint` with
// `ddplint.interpreter`, else with the Python extension's selected interpreter, else `python3`.
import * as fs from "fs";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

const NAME = "ddplint";
let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

interface Command {
  command: string;
  args: string[];
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel(NAME);
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("ddplint.restart", restart),
    vscode.commands.registerCommand("ddplint.showLogs", () => output?.show()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      // The server reads its options once, at start: a changed setting needs a new server.
      if (event.affectsConfiguration(NAME) && !event.affectsConfiguration(`${NAME}.trace`)) {
        void restart();
      }
    }),
  );
  const python = vscode.extensions.getExtension(PYTHON_EXTENSION);
  if (python) {
    // Selecting another interpreter may mean another ddplint.
    await Promise.resolve(python.activate()).catch(() => undefined);
    const onChange = python.exports?.environments?.onDidChangeActiveEnvironmentPath;
    if (typeof onChange === "function") {
      context.subscriptions.push(onChange(() => void restart()));
    }
  }
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    await running.stop().catch(() => undefined);
  }
}

async function start(): Promise<void> {
  const settings = vscode.workspace.getConfiguration(NAME, firstFolder());
  const server = await serverCommand(settings);
  output?.appendLine(`starting: ${[server.command, ...server.args].join(" ")}`);
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    options: { cwd: firstFolder()?.fsPath },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      { notebook: "jupyter-notebook", language: "python" },
    ],
    outputChannel: output,
    initializationOptions: {
      showSyntaxErrors: settings.get<boolean>("showSyntaxErrors", false),
      severity: settings.get<string>("severity", "warning"),
      unsafeFixes: settings.get<boolean>("unsafeFixes", false),
    },
  };
  client = new LanguageClient(NAME, "ddplint", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    const hint = "install it there with `pip install 'ddplint[lsp]'`, or set ddplint.path / ddplint.interpreter";
    void vscode.window.showErrorMessage(`ddplint: could not start \`${server.command} ${server.args.join(" ")}\` (${error}); ${hint}`);
  }
}

const PYTHON_EXTENSION = "ms-python.python";

async function serverCommand(settings: vscode.WorkspaceConfiguration): Promise<Command> {
  const extra = settings.get<string[]>("args", []);
  const executable = settings.get<string[]>("path", []).map(expand).find((path) => fs.existsSync(path));
  if (executable) {
    return { command: executable, args: ["lsp", ...extra] };
  }
  const interpreter = settings.get<string[]>("interpreter", []).map(expand)[0] ?? (await selectedInterpreter()) ?? defaultPython();
  return { command: interpreter, args: ["-m", "ddplint", "lsp", ...extra] };
}

/** The interpreter chosen in the Python extension for the first workspace folder, if any. */
async function selectedInterpreter(): Promise<string | undefined> {
  try {
    const environments = vscode.extensions.getExtension(PYTHON_EXTENSION)?.exports?.environments;
    if (!environments) {
      return undefined;
    }
    const active = environments.getActiveEnvironmentPath(firstFolder());
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath;
  } catch {
    return undefined; // an older Python extension without this API
  }
}

function defaultPython(): string {
  return process.platform === "win32" ? "python" : "python3";
}

function firstFolder(): vscode.Uri | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

/** `${workspaceFolder}` and a leading `~` in path settings, as in ruff's extension. */
function expand(path: string): string {
  const folder = firstFolder()?.fsPath ?? "";
  const home = process.env.HOME ?? process.env.USERPROFILE ?? "";
  return path.replace(/\$\{workspaceFolder\}/g, folder).replace(/^~(?=$|[\\/])/, home);
}
