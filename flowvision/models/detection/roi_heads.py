"""RoIHeads (box branch) with torchvision's matching, sampling, loss and postprocessing."""
import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.ops import batched_nms, box_iou, clip_boxes_to_image, remove_small_boxes, roi_align

from . import _utils as det_utils

__all__ = ["RoIHeads", "fastrcnn_loss", "maskrcnn_loss", "maskrcnn_inference", "keypoints_to_heatmap",
           "heatmaps_to_keypoints", "keypointrcnn_loss", "keypointrcnn_inference"]


def maskrcnn_inference(x, labels):
    """Per detection, the sigmoid mask of its predicted class: list of [N_i, 1, M, M]."""
    mask_prob = x.sigmoid()
    boxes_per_image = [int(lab.shape[0]) for lab in labels]
    lab = np.concatenate([lab.numpy() for lab in labels]) if labels else np.zeros((0,), np.int64)
    mask_prob = mask_prob[flow.from_numpy(np.arange(lab.shape[0])), flow.from_numpy(lab)][:, None]
    return mask_prob.split(boxes_per_image, dim=0)


def project_masks_on_boxes(gt_masks, boxes, matched_idxs, M):
    rois = flow.cat([flow.from_numpy(np.asarray(matched_idxs)).to(boxes.dtype)[:, None], boxes.detach()], dim=1)
    return roi_align(gt_masks[:, None].to(rois.dtype), rois, (M, M), 1.0)[:, 0]


def maskrcnn_loss(mask_logits, proposals, gt_masks, gt_labels, mask_matched_idxs):
    M = mask_logits.shape[-1]
    labels = np.concatenate([gl.numpy()[idx] for gl, idx in zip(gt_labels, mask_matched_idxs)])
    mask_targets = flow.cat([project_masks_on_boxes(m, p, i, M)
                             for m, p, i in zip(gt_masks, proposals, mask_matched_idxs)], dim=0)
    if mask_targets.numel() == 0:
        return mask_logits.sum() * 0
    picked = mask_logits[flow.from_numpy(np.arange(labels.shape[0])), flow.from_numpy(labels.astype(np.int64))]
    return F.binary_cross_entropy_with_logits(picked, mask_targets)


def keypoints_to_heatmap(keypoints, rois, heatmap_size):
    """Ground-truth keypoints ``[P, K, 3]`` (x, y, visibility) of the proposals ``rois`` ``[P, 4]`` as flat indices
    into a ``heatmap_size``^2 grid over each RoI, and whether each is visible and inside its RoI (numpy, int64).
    A keypoint exactly on the RoI's right/bottom edge goes to the last cell, as in torchvision."""
    kp = np.asarray(keypoints)
    rois = np.asarray(rois)
    offset_x, offset_y = rois[:, 0:1], rois[:, 1:2]
    scale_x = heatmap_size / (rois[:, 2] - rois[:, 0])[:, None]
    scale_y = heatmap_size / (rois[:, 3] - rois[:, 1])[:, None]
    x, y = kp[..., 0], kp[..., 1]
    x_boundary = x == rois[:, 2][:, None]
    y_boundary = y == rois[:, 3][:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        x = np.floor((x - offset_x) * scale_x).astype(np.int64)
        y = np.floor((y - offset_y) * scale_y).astype(np.int64)
    x[x_boundary] = heatmap_size - 1
    y[y_boundary] = heatmap_size - 1
    valid = (x >= 0) & (y >= 0) & (x < heatmap_size) & (y < heatmap_size) & (kp[..., 2] > 0)
    valid = valid.astype(np.int64)
    return (y * heatmap_size + x) * valid, valid


_BICUBIC_A = -0.75  # torch's bicubic convolution constant


def _bicubic_matrix(out_sizes, in_size, out_max, dtype):
    """[N, out_max, in_size] weights of torch's bicubic resize (align_corners=False, no antialias, border taps
    clamped) from ``in_size`` to ``out_sizes[i]`` pixels; rows at or beyond ``out_sizes[i]`` stay zero."""
    dtype = np.dtype(dtype).type
    scale = (dtype(in_size) / out_sizes.astype(dtype))[:, None]
    dst = np.arange(out_max).astype(dtype)[None, :]
    real = scale * (dst + dtype(0.5)) - dtype(0.5)
    index = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    t = np.clip(real - index.astype(dtype), dtype(0), dtype(1)).astype(dtype)
    a = dtype(_BICUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + dtype(2)) * x - (a + dtype(3))) * x * x + dtype(1)

    def far(x):  # 1 < |x| < 2
        return ((a * x - dtype(5) * a) * x + dtype(8) * a) * x - dtype(4) * a

    coeffs = (far(t + dtype(1)), near(t), near(dtype(1) - t), far(dtype(2) - t))
    out = np.zeros((out_sizes.shape[0], out_max, in_size), dtype)
    rows, cols = np.nonzero(np.arange(out_max)[None, :] < out_sizes[:, None])
    for j, c in enumerate(coeffs):  # the 4 taps; clamped taps at the border add up, as torch's sum does
        tap = np.clip(index - 1 + j, 0, in_size - 1)
        np.add.at(out, (rows, cols, tap[rows, cols]), c.astype(dtype)[rows, cols])
    return out


_KEYPOINT_CHUNK_ELEMENTS = 1 << 24  # upsampled heatmap values held at once (64 MiB in float32)


def heatmaps_to_keypoints(maps, rois):
    """Keypoint locations from heatmaps: ``maps`` ``[R, K, H, W]`` logits, ``rois`` ``[R, 4]`` -> (``[R, K, 3]``
    (x, y, 1), ``[R, K]`` scores), float32 as torchvision.

    torchvision upsamples each RoI's maps bicubically to ceil(RoI size) in a per-RoI loop and takes the argmax.
    Bicubic resizing is separable, so here all RoIs of a chunk are upsampled at once as ``Ry @ maps @ Rx^T`` with
    per-RoI weight matrices zero-padded to the chunk's largest RoI; the padding is masked out before the argmax
    (row-major positions keep torch's first-maximum tie rule). Chunks bound the memory of the upsampled maps."""
    m = maps.detach().numpy() if isinstance(maps, flow.Tensor) else np.asarray(maps)
    r = rois.detach().numpy() if isinstance(rois, flow.Tensor) else np.asarray(rois)
    num_rois, num_keypoints, in_h, in_w = m.shape
    dt = m.dtype.type if m.dtype in (np.float32, np.float64) else np.float32
    m = m.astype(dt, copy=False)
    widths = np.maximum(r[:, 2] - r[:, 0], 1).astype(dt)
    heights = np.maximum(r[:, 3] - r[:, 1], 1).astype(dt)
    out_w = np.ceil(widths).astype(np.int64)
    out_h = np.ceil(heights).astype(np.int64)
    xy_preds = np.zeros((num_rois, num_keypoints, 3), np.float32)
    end_scores = np.zeros((num_rois, num_keypoints), np.float32)
    # chunks of similar-sized RoIs (sorted by upsampled area) waste little padding; RoIs per chunk from the
    # largest RoI, so a chunk's padded maps never exceed the budget
    order = np.argsort(-(out_h * out_w), kind="stable")
    per_roi = num_keypoints * int(out_h.max(initial=1)) * int(out_w.max(initial=1))
    chunk = max(1, _KEYPOINT_CHUNK_ELEMENTS // per_roi)
    for start in range(0, num_rois, chunk):
        sel = order[start:start + chunk]
        n = sel.shape[0]
        hmax, wmax = int(out_h[sel].max()), int(out_w[sel].max())
        ry = _bicubic_matrix(out_h[sel], in_h, hmax, dt)                      # [n, hmax, H]
        rx = _bicubic_matrix(out_w[sel], in_w, wmax, dt)                      # [n, wmax, W]
        up = ry[:, None] @ (m[sel] @ rx[:, None].transpose(0, 1, 3, 2))       # [n, K, hmax, wmax]
        outside = ((np.arange(hmax)[None, :, None] >= out_h[sel, None, None])
                   | (np.arange(wmax)[None, None, :] >= out_w[sel, None, None]))
        up += np.where(outside, -np.inf, 0).astype(dt)[:, None]                # padding never wins the argmax
        flat = up.reshape(n, num_keypoints, -1)
        pos = flat.argmax(-1)
        y_int, x_int = pos // wmax, pos % wmax
        # torchvision: (int + 0.5) * (size / ceil(size)) + corner, computed in the maps' dtype, stored as float32
        x = (x_int.astype(np.float32) + np.float32(0.5)) * (widths[sel] / out_w[sel].astype(dt))[:, None]
        y = (y_int.astype(np.float32) + np.float32(0.5)) * (heights[sel] / out_h[sel].astype(dt))[:, None]
        xy_preds[sel, :, 0] = x + r[sel, 0:1].astype(dt)
        xy_preds[sel, :, 1] = y + r[sel, 1:2].astype(dt)
        xy_preds[sel, :, 2] = 1
        end_scores[sel] = np.take_along_axis(flat, pos[..., None], -1)[..., 0]
    return flow.from_numpy(xy_preds), flow.from_numpy(end_scores)


def keypointrcnn_loss(keypoint_logits, proposals, gt_keypoints, keypoint_matched_idxs):
    """Cross-entropy over each RoI's ``H*W`` heatmap cells for every visible keypoint inside its RoI."""
    N, K, H, W = keypoint_logits.shape
    if H != W:
        raise ValueError(f"keypoint_logits height and width (last two elements of shape) should be equal. Instead got "
                         f"H = {H} and W = {W}")
    targets, valid = [], []
    for props, gt_kp, midx in zip(proposals, gt_keypoints, keypoint_matched_idxs):
        heatmaps, v = keypoints_to_heatmap(gt_kp.detach().numpy()[midx], props.detach().numpy(), H)
        targets.append(heatmaps.reshape(-1))
        valid.append(v.reshape(-1))
    targets = np.concatenate(targets) if targets else np.zeros((0,), np.int64)
    valid = np.nonzero(np.concatenate(valid))[0] if valid else np.zeros((0,), np.int64)
    if targets.size == 0 or valid.size == 0:
        return keypoint_logits.sum() * 0
    logits = keypoint_logits.reshape(N * K, H * W)[flow.from_numpy(valid)]
    return F.cross_entropy(logits, flow.from_numpy(targets[valid]))


def keypointrcnn_inference(x, boxes):
    """Per image: keypoints ``[N_i, K, 3]`` and their heatmap scores ``[N_i, K]``."""
    xy, scores = heatmaps_to_keypoints(x, flow.cat(list(boxes), dim=0) if boxes else flow.zeros((0, 4)))
    counts = [int(b.shape[0]) for b in boxes]
    return list(xy.split(counts, dim=0)), list(scores.split(counts, dim=0))


def fastrcnn_loss(class_logits, box_regression, labels, regression_targets):
    labels = flow.cat(labels, dim=0)
    regression_targets = flow.cat(list(regression_targets), dim=0)
    classification_loss = F.cross_entropy(class_logits, labels)
    lab = labels.numpy()
    pos = np.nonzero(lab > 0)[0]
    N = class_logits.shape[0]
    box_regression = box_regression.reshape(N, box_regression.shape[-1] // 4, 4)
    box_loss = F.smooth_l1_loss(box_regression[flow.from_numpy(pos), flow.from_numpy(lab[pos])],
                                regression_targets[flow.from_numpy(pos)], beta=1 / 9, reduction="sum")
    return classification_loss, box_loss / lab.size


class RoIHeads(nn.Module):
    def __init__(self, box_roi_pool, box_head, box_predictor, fg_iou_thresh, bg_iou_thresh, batch_size_per_image,
                 positive_fraction, bbox_reg_weights, score_thresh, nms_thresh, detections_per_img,
                 mask_roi_pool=None, mask_head=None, mask_predictor=None, keypoint_roi_pool=None, keypoint_head=None,
                 keypoint_predictor=None):
        super().__init__()
        self.box_similarity = box_iou
        self.proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh, allow_low_quality_matches=False)
        self.fg_bg_sampler = det_utils.BalancedPositiveNegativeSampler(batch_size_per_image, positive_fraction)
        if bbox_reg_weights is None:
            bbox_reg_weights = (10.0, 10.0, 5.0, 5.0)
        self.box_coder = det_utils.BoxCoder(bbox_reg_weights)
        self.box_roi_pool = box_roi_pool
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.mask_roi_pool = mask_roi_pool
        self.mask_head = mask_head
        self.mask_predictor = mask_predictor
        self.keypoint_roi_pool = keypoint_roi_pool
        self.keypoint_head = keypoint_head
        self.keypoint_predictor = keypoint_predictor

    def has_mask(self):
        return self.mask_roi_pool is not None and self.mask_head is not None and self.mask_predictor is not None

    def has_keypoint(self):
        return (self.keypoint_roi_pool is not None and self.keypoint_head is not None
                and self.keypoint_predictor is not None)

    def check_targets(self, targets):
        if targets is None:
            raise ValueError("targets should not be None")
        if not all("boxes" in t for t in targets):
            raise ValueError("Every element of targets should have a boxes key")
        if not all("labels" in t for t in targets):
            raise ValueError("Every element of targets should have a labels key")
        if self.has_mask() and not all("masks" in t for t in targets):
            raise ValueError("Every element of targets should have a masks key")
        if self.has_keypoint() and not all("keypoints" in t for t in targets):
            raise ValueError("Every element of targets should have a keypoints key")

    def assign_targets_to_proposals(self, proposals, gt_boxes, gt_labels):
        matched_idxs, labels = [], []
        for props, gtb, gtl in zip(proposals, gt_boxes, gt_labels):
            n = props.shape[0]
            if gtb.numel() == 0:
                clamped = np.zeros((n,), np.int64)
                lab = np.zeros((n,), np.int64)
            else:
                mi = self.proposal_matcher(box_iou(gtb.detach(), props.detach())).numpy()
                clamped = np.maximum(mi, 0)
                lab = gtl.numpy()[clamped].astype(np.int64)
                lab[mi == self.proposal_matcher.BELOW_LOW_THRESHOLD] = 0
                lab[mi == self.proposal_matcher.BETWEEN_THRESHOLDS] = -1
            matched_idxs.append(clamped)
            labels.append(lab)
        return matched_idxs, labels

    def select_training_samples(self, proposals, targets):
        self.check_targets(targets)
        dtype = proposals[0].dtype
        gt_boxes = [t["boxes"].to(dtype) for t in targets]
        gt_labels = [t["labels"] for t in targets]
        proposals = [flow.cat((p, g.detach())) for p, g in zip(proposals, gt_boxes)]
        matched_idxs, labels = self.assign_targets_to_proposals(proposals, gt_boxes, gt_labels)
        pos, neg = self.fg_bg_sampler([flow.from_numpy(lab) for lab in labels])
        out_props, out_labels, out_matched, matched_gt = [], [], [], []
        for i in range(len(proposals)):
            idx = np.nonzero(pos[i].numpy() | neg[i].numpy())[0]
            out_props.append(proposals[i][flow.from_numpy(idx)])
            out_labels.append(flow.from_numpy(labels[i][idx]))
            out_matched.append(matched_idxs[i][idx])
            gtb = gt_boxes[i].detach()
            if gtb.numel() == 0:
                gtb = flow.zeros((1, 4), dtype=dtype)
            matched_gt.append(gtb[flow.from_numpy(out_matched[-1])])
        regression_targets = self.box_coder.encode(matched_gt, out_props)
        return out_props, out_matched, out_labels, regression_targets

    def postprocess_detections(self, class_logits, box_regression, proposals, image_shapes):
        num_classes = class_logits.shape[-1]
        boxes_per_image = [p.shape[0] for p in proposals]
        pred_boxes = self.box_coder.decode(box_regression, proposals)
        pred_scores = F.softmax(class_logits, -1)
        all_boxes, all_scores, all_labels = [], [], []
        for boxes, scores, image_shape in zip(pred_boxes.split(boxes_per_image, 0),
                                              pred_scores.split(boxes_per_image, 0), image_shapes):
            boxes = clip_boxes_to_image(boxes, image_shape).numpy()
            scores = scores.numpy()
            labels = np.broadcast_to(np.arange(num_classes, dtype=np.int64)[None], scores.shape)
            boxes = boxes[:, 1:].reshape(-1, 4)
            scores = scores[:, 1:].reshape(-1)
            labels = labels[:, 1:].reshape(-1)
            inds = np.nonzero(scores > self.score_thresh)[0]
            boxes, scores, labels = boxes[inds], scores[inds], labels[inds]
            keep = remove_small_boxes(flow.from_numpy(boxes), min_size=1e-2).numpy()
            boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
            keep = batched_nms(flow.from_numpy(boxes), flow.from_numpy(scores), flow.from_numpy(labels),
                               self.nms_thresh).numpy()[: self.detections_per_img]
            all_boxes.append(flow.from_numpy(boxes[keep]))
            all_scores.append(flow.from_numpy(scores[keep]))
            all_labels.append(flow.from_numpy(labels[keep]))
        return all_boxes, all_scores, all_labels

    def forward(self, features, proposals, image_shapes, targets=None):
        if targets is not None:
            for t in targets:
                if not t["boxes"].is_floating_point():
                    raise TypeError(f"target boxes must of float type, instead got {t['boxes'].dtype}")
                if t["labels"].dtype != flow.int64:
                    raise TypeError(f"target labels must of int64 type, instead got {t['labels'].dtype}")
                # a missing "keypoints" key is reported by check_targets (torchvision raises KeyError here)
                if self.has_keypoint() and "keypoints" in t and t["keypoints"].dtype != flow.float32:
                    raise TypeError(f"target keypoints must of float type, instead got {t['keypoints'].dtype}")
        if self.training:
            proposals, matched_idxs, labels, regression_targets = self.select_training_samples(proposals, targets)
        box_features = self.box_roi_pool(features, proposals, image_shapes)
        box_features = self.box_head(box_features)
        class_logits, box_regression = self.box_predictor(box_features)
        result, losses = [], {}
        if self.training:
            loss_classifier, loss_box_reg = fastrcnn_loss(class_logits, box_regression, labels, regression_targets)
            losses = {"loss_classifier": loss_classifier, "loss_box_reg": loss_box_reg}
        else:
            with flow.no_grad():
                boxes, scores, labels = self.postprocess_detections(class_logits.detach(), box_regression.detach(),
                                                                    proposals, image_shapes)
            for b, s, lab in zip(boxes, scores, labels):
                result.append({"boxes": b, "labels": lab, "scores": s})
        if self.has_mask():
            if self.training:
                mask_proposals, pos_matched_idxs = [], []
                for i in range(len(proposals)):
                    pos = np.nonzero(labels[i].numpy() > 0)[0]
                    mask_proposals.append(proposals[i][flow.from_numpy(pos)])
                    pos_matched_idxs.append(matched_idxs[i][pos])
            else:
                mask_proposals = [r["boxes"] for r in result]
            mask_features = self.mask_roi_pool(features, mask_proposals, image_shapes)
            mask_logits = self.mask_predictor(self.mask_head(mask_features))
            if self.training:
                losses["loss_mask"] = maskrcnn_loss(mask_logits, mask_proposals, [t["masks"] for t in targets],
                                                    [t["labels"] for t in targets], pos_matched_idxs)
            else:
                with flow.no_grad():
                    probs = maskrcnn_inference(mask_logits.detach(), [r["labels"] for r in result])
                for p, r in zip(probs, result):
                    r["masks"] = p
        if self.has_keypoint():
            if self.training:  # only the positive proposals, with their matched ground truth
                keypoint_proposals, pos_matched_idxs = [], []
                for i in range(len(proposals)):
                    pos = np.nonzero(labels[i].numpy() > 0)[0]
                    keypoint_proposals.append(proposals[i][flow.from_numpy(pos)])
                    pos_matched_idxs.append(matched_idxs[i][pos])
            else:
                keypoint_proposals = [r["boxes"] for r in result]
            keypoint_features = self.keypoint_roi_pool(features, keypoint_proposals, image_shapes)
            keypoint_logits = self.keypoint_predictor(self.keypoint_head(keypoint_features))
            if self.training:
                losses["loss_keypoint"] = keypointrcnn_loss(keypoint_logits, keypoint_proposals,
                                                            [t["keypoints"] for t in targets], pos_matched_idxs)
            else:
                with flow.no_grad():
                    kp, kp_scores = keypointrcnn_inference(keypoint_logits.detach(), keypoint_proposals)
                for k, ks, r in zip(kp, kp_scores, result):
                    r["keypoints"] = k
                    r["keypoints_scores"] = ks
        return result, losses
