/** Interfaces other plugins use, each paired with its Token. */
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';

/** The chat the panel shows: other plugins (the notebook commands) send through it. */
export interface IResolveChat {
  /** Send a message in the current session (the panel opens if needed by the caller). */
  send(text: string, options?: { readonly notebook?: string }): Promise<void>;
  /** Emitted when an artifact was promoted, so browsers can refresh. */
  readonly artifactsChanged: ISignal<IResolveChat, void>;
  /** Tell listeners the artifact list changed. */
  notifyArtifactsChanged(): void;
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
}
