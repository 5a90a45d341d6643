/** Interfaces other plugins use, each paired with its Token. */
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';
import type { INewCell, IPlacement } from './proposal';
import type { IProposal } from './run';

/** The chat the panel shows: other plugins (the notebook commands) send through it. */
export interface IResolveChat {
  /** Send a message in the current session (the panel opens if needed by the caller). */
  send(text: string, options?: { readonly notebook?: string }): Promise<void>;
  /** Emitted when an artifact was promoted, so browsers can refresh. */
  readonly artifactsChanged: ISignal<IResolveChat, void>;
  /** Tell listeners the artifact list changed. */
  notifyArtifactsChanged(): void;
  /**
   * Start a chat bound to `notebook` (its path): every message sends it, so the notebook tools
   * act on it and `@name` completes its kernel's variables. Opens the panel.
   */
  askAboutNotebook(notebook: string): void;
  /** The notebook in front is now `notebook` (null: none): a bound chat follows it. */
  followNotebook(notebook: string | null): void;
  /** How the panel reads and changes notebooks (the notebook plugin provides it). */
  setNotebookActions(actions: INotebookActions): void;
}

/** What the panel needs of the open notebooks, for proposals (issue 17). */
export interface INotebookActions {
  /** The source of cell `cellId` in the open notebook `path`, or null (not open, no such cell). */
  liveSource(path: string, cellId: string): string | null;
  /** The ids of the open notebook `path`'s cells, in order; null when it is not open. */
  cellIds(path: string): string[] | null;
  /**
   * Whether the open notebook `path` is a shared document (real-time collaboration); null when
   * it is not open.
   */
  shared(path: string): boolean | null;
  /**
   * Call `changed` whenever the source of cell `cellId` in the open notebook `path` changes
   * (another person's typing under real-time collaboration, the person's own otherwise, the
   * notebook opened or closed). Returns what stops following.
   */
  followSource(path: string, cellId: string, changed: () => void): () => void;
  /**
   * Open notebook `path` (or find it open) and wait until its model is ready, and with
   * `withKernel` its kernel too (started or attached, for Accept and run).
   */
  open(path: string, withKernel?: boolean): Promise<void>;
  /** Open notebook `path` in front at cell `cellId` (made active and scrolled to). */
  reveal(path: string, cellId: string): Promise<void>;
  /**
   * Put accepted cells into the open notebook's model where `proposal` says (one undoable
   * change; the person's unsaved edits stay). Resolves with where they went.
   */
  apply(proposal: IProposal, cells: INewCell[]): Promise<IPlacement>;
}

/** The token of {@link IResolveChat}. */
export const IResolveChat = new Token<IResolveChat>(
  'jupyter-resolve:IResolveChat',
  'The jupyter-resolve chat: send a message to the agent from elsewhere in JupyterLab.'
);

/** Command ids, in one place. */
export namespace CommandIDs {
  export const openPanel = 'resolve:open-panel';
  export const askAboutCell = 'resolve:ask-about-cell';
  export const promoteOutput = 'resolve:promote-output';
  export const openArtifacts = 'resolve:open-artifacts';
  export const newSession = 'resolve:new-session';
  export const stop = 'resolve:stop';
  export const askAboutNotebook = 'resolve:ask-about-notebook';
}
