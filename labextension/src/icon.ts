/** The panel's tab icon. */
import { LabIcon } from '@jupyterlab/ui-components';

const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 3.2a6.8 6.8 0 0 1 6.6 5.2h-3.4a3.6 3.6 0 0 0-6.4 0H5.4A6.8 6.8 0 0 1 12 5.2zm0 13.6a6.8 6.8 0 0 1-6.6-5.2h3.4a3.6 3.6 0 0 0 6.4 0h3.4a6.8 6.8 0 0 1-6.6 5.2z"/>
  </g>
</svg>`;

export const resolveIcon = new LabIcon({ name: 'jupyter-resolve:icon', svgstr: svg });
