/**
 * External agents (issue 36, DESIGN 10.4): the ones `GET resolve/api/agents` lists, how the
 * picker names one next to the souls, and the chat body that asks one (pure: no I/O, no DOM).
 */

/** Where an external agent's process stands. */
export type AgentState = 'idle' | 'running' | 'error';

const AGENT_STATES: readonly AgentState[] = ['idle', 'running', 'error'];

/** One external agent (`c.Resolve.acp_agents`). */
export interface IAgent {
  readonly name: string;
  readonly description: string;
  readonly state: AgentState;
  /** Why it failed (already redacted by the server), shown as text. */
  readonly error: string | null;
}

/** Agent names as the server allows them (contracts/acp_agents.py `AGENT_NAME`). */
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A shape error in the agents answer. */
export class AgentsShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

/**
 * Check `GET resolve/api/agents` (`{agents: [...]}`): entries without a valid name are dropped,
 * duplicates kept once; an unknown state reads as `idle`.
 */
export function validateAgents(body: unknown): IAgent[] {
  if (!isObject(body) || !Array.isArray(body.agents)) {
    throw new AgentsShapeError('agents: expected {agents: [...]}');
  }
  const seen = new Set<string>();
  const agents: IAgent[] = [];
  for (const a of body.agents) {
    if (!isObject(a) || typeof a.name !== 'string' || !AGENT_NAME.test(a.name)) {
      continue;
    }
    if (seen.has(a.name)) {
      continue;
    }
    seen.add(a.name);
    agents.push({
      name: a.name,
      description: typeof a.description === 'string' ? a.description : '',
      state: AGENT_STATES.includes(a.state as AgentState) ? (a.state as AgentState) : 'idle',
      error: typeof a.error === 'string' && a.error ? a.error : null
    });
  }
  return agents;
}

/** The picker's value for an external agent (a soul's is its name; no name holds a colon). */
export function agentPick(name: string): string {
  return `agent:${name}`;
}

/** What the picker's value asks for: a soul ('' : the default), or an external agent. */
export function parsePick(value: string): { readonly soul: string } | { readonly agent: string } {
  return value.startsWith('agent:') ? { agent: value.slice('agent:'.length) } : { soul: value };
}

/** An OpenAI-style chat message. */
export interface IChatMessage {
  readonly role: 'user' | 'assistant' | 'system';
  readonly content: string;
}

/** The body of `POST resolve/api/chat`. */
export interface IChatRequest {
  readonly messages: IChatMessage[];
  readonly session_id?: string;
  readonly soul?: string;
  /** An external agent (`c.Resolve.acp_agents`) answers instead of the gateway's model. */
  readonly agent?: string;
  /** The notebook the chat is bound to (its kernel answers for the notebook tools). */
  readonly notebook?: string;
  /** Variables mentioned as `@name`: the server describes each in the notebook's kernel. */
  readonly mentions?: { readonly name: string }[];
  /** The model to answer with (one of `GET resolve/api/models`); absent: the server's default. */
  readonly model?: string;
}

/** What goes with a chat message besides its text. */
export interface IChatChoices {
  /** The session to continue; null: the server starts one. */
  readonly sessionId: string | null;
  /** The picker's value: a soul's name, `agent:NAME`, or '' (the default soul). */
  readonly soul: string;
  /** The model chosen ('' : the server's default); an external agent brings its own. */
  readonly model: string;
  readonly notebook: string | null;
  /** The variables mentioned as `@name`. */
  readonly mentions?: readonly string[];
}

/**
 * The chat body of a message: only the new message (the server continues the session's
 * transcript, DESIGN 9.1), the soul or the external agent picked, and what is set of the rest.
 */
export function chatBody(message: string, choices: IChatChoices): IChatRequest {
  const { sessionId, model, notebook, mentions } = choices;
  const pick = parsePick(choices.soul);
  const agent = 'agent' in pick ? pick.agent : '';
  const soul = 'soul' in pick ? pick.soul : '';
  return {
    messages: [{ role: 'user', content: message }],
    ...(sessionId ? { session_id: sessionId } : {}),
    ...(agent ? { agent } : soul ? { soul } : {}),
    ...(model && !agent ? { model } : {}),
    ...(notebook ? { notebook } : {}),
    // sent only when there are some: a server without mentions refuses the field
    ...(notebook && mentions?.length ? { mentions: mentions.map(name => ({ name })) } : {})
  };
}
